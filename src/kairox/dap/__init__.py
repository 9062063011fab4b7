"""kairox.dap."""
