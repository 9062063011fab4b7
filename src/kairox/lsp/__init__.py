"""kairox.lsp."""
