"""Approval: the policy (pure) and the gate every tool call passes."""
