"""The hash-partitioned AttributeMap pattern, in the Dex idiom."""
