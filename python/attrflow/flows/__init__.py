"""Flows built into attrflow, with the Python types their RPCs take and return."""
