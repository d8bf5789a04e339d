"""The relay's wire format: constants, typed messages, parsing and the auth handshake. No I/O."""
