"""Flow modules and Quart controllers written in the exact idiom of the Dex Python SDK's
pattern examples; they differ from code written for Dex only in their import lines."""
