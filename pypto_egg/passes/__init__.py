"""Passes over the tile IR: FlattenTileNdTo2D and the TileOps2D verifier."""

from .flatten import FlattenTileNdTo2D, flatten_tile_nd_to_2d
from .properties import IRProperty
from .verify import tile_ops_2d_diagnostics, verify_properties, verify_tile_ops_2d

__all__ = ["FlattenTileNdTo2D", "IRProperty", "flatten_tile_nd_to_2d", "tile_ops_2d_diagnostics",
           "verify_properties", "verify_tile_ops_2d"]  # fmt: skip
