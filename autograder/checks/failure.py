"""The exception every check raises: a message for the student, plus pictures for layouts."""

from __future__ import annotations


class CheckFailure(AssertionError):
    """A check failed. ``str()`` is the message; layout checks also attach both block pictures."""

    def __init__(self, message: str, expected_picture: str | None = None, found_picture: str | None = None):
        super().__init__(message)
        self.message = message
        self.expected_picture = expected_picture
        self.found_picture = found_picture
