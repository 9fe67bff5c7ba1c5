"""pypto-egg: PyPTO's FlattenTileNdTo2D pass as an e-graph optimizer on egglog."""

__version__ = "0.1.0"
