"""The sequentially chunked AttributeMap pattern, in the Dex idiom."""
