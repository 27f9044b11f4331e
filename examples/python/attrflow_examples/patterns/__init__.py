"""The design-pattern examples, one subpackage per pattern."""
