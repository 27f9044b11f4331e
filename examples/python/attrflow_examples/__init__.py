"""HTTP services built on attrflow: one Quart app serving the pattern examples."""
