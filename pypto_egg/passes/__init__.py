"""Passes over the tile IR: FlattenTileNdTo2D and the TileOps2D verifier."""

from .flatten import FlattenTileNdTo2D, flatten_tile_nd_to_2d
from .properties import IRProperty
from .validate import ValidationError, ValidationReport, validate_translation
from .verify import tile_ops_2d_diagnostics, verify_properties, verify_tile_ops_2d

__all__ = ["FlattenTileNdTo2D", "IRProperty", "ValidationError", "ValidationReport", "flatten_tile_nd_to_2d",
           "tile_ops_2d_diagnostics", "validate_translation",
           "verify_properties", "verify_tile_ops_2d"]  # fmt: skip
