"""One module per area, each exposing `FIGURES = [Figure(...)]`; bench.run finds them all here."""
