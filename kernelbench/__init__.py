"""kernelbench: reproduce and extend five large-scale kernel learning papers."""

__version__ = "0.1.0"
