// The built-in renderers, registered through the public registerRenderer like any user renderer.
import { registerRenderer } from "../registry.js";
import "./agentCell.js"; // the notebook's python and new_cell tools, drawn as cells (registered by tool name)
import assistant from "./assistant.js";
import bashExecution from "./bashExecution.js";
import branchSummary from "./branchSummary.js";
import compactionSummary from "./compactionSummary.js";
import custom from "./custom.js";
import notebookCell from "./notebookCell.js";
import toolResult from "./toolResult.js";
import unknown from "./unknown.js";
import user from "./user.js";

registerRenderer("user", user);
registerRenderer("assistant", assistant);
registerRenderer("toolResult", toolResult);
registerRenderer("bashExecution", bashExecution);
registerRenderer("compactionSummary", compactionSummary);
registerRenderer("branchSummary", branchSummary);
registerRenderer("custom", custom);
registerRenderer("notebookCell", notebookCell);

/** Rendered for any role without a renderer. */
export const fallbackRenderer = unknown;
