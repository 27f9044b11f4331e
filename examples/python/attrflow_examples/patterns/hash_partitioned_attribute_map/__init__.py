"""The hash-partitioned AttributeMap: a customer directory keyed by canonical email."""
