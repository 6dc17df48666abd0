"""The one exception family that the CLI turns into a one-line message and exit status 2."""


class TaggerError(Exception):
    """Bad input, a bad taxonomy or a bad model: ``str(err)`` is one line naming the file,
    line or record and what is wrong."""
