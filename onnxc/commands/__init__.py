"""Subcommands of the `onnxc` command, one module each."""
