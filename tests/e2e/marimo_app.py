"""A marimo notebook: an AgentSession run on the scripted faux model (no network, no key), its transcript and its
inspector shown through ``mo.ui.anywidget`` (tests/e2e/test_marimo_browser.py serves it with ``marimo run``).

By hand: ``marimo edit tests/e2e/marimo_app.py`` (the session file goes to a temporary folder)."""

import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import tempfile

    import marimo as mo

    import pi_notebook
    from pi_notebook.ai import faux
    from pi_notebook.coding_agent import AgentSession

    return AgentSession, faux, mo, pi_notebook, tempfile


@app.cell
async def _(AgentSession, faux, tempfile):
    folder = tempfile.mkdtemp(prefix="pi-marimo-")
    session = AgentSession.open(folder, cwd=folder)
    await session.bash("echo 'pears: 5, apples: 3' > fruit.txt")
    # A long line with no space to break at (a URL): the inspector must keep it inside marimo's column.
    await session.bash("echo https://example.com/orders/" + "0123456789abcdef" * 12)
    faux.set_responses(
        [
            faux.message(faux.tool_call("read", {"path": "fruit.txt"})),
            "There are **5 pears** in `fruit.txt`.",
        ]
    )
    _new = await session.prompt("How many pears are in `fruit.txt`?", model="faux/faux-1", tools=["read"])
    return (session,)


@app.cell
def _(mo, pi_notebook, session):
    transcript = mo.ui.anywidget(pi_notebook.show(session, title="Pears"))
    mo.output.replace(transcript)
    return


@app.cell
def _(mo, pi_notebook, session):
    inspector = mo.ui.anywidget(pi_notebook.inspect(session))
    mo.output.replace(inspector)
    return (inspector,)


@app.cell
async def _(inspector, session):
    # After the inspector is shown (it is an argument): the inspector follows the session, one row more.
    _later = await session.bash("wc -l fruit.txt")
    return


if __name__ == "__main__":
    app.run()
