"""Integration with the operating system: logging, autostart."""
