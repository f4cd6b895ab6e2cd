"""`python -m incast` is the `incast` command."""

from .cli import main

main()
