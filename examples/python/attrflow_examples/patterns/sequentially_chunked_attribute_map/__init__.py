"""The sequentially chunked AttributeMap: an append-only subscriber archive, paged newest first."""
