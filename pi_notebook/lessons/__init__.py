"""Checks for the teaching notebooks' exercises (``notebooks/NN-*.ipynb``): each lesson's checkers live in
``lessonNN.py`` and use :func:`expect` / :func:`report` from here.

A learner's cell holds ``answer = ...`` until they fill it in: a checker given ``...`` says so and raises nothing, so
Run All (and nbval) goes on. A wrong answer raises :class:`WrongAnswer` whose message says what is wrong and gives
the hint; a right one prints one line. nbval runs each exercise's solution cell (tagged ``solution``, its source
hidden), which calls the same checker on the solution.
"""

from .exercise import NOT_ANSWERED, WrongAnswer, expect, expect_indices, report, unanswered

__all__ = ["NOT_ANSWERED", "WrongAnswer", "expect", "expect_indices", "report", "unanswered"]
