"""Broker-side security: SASL mechanism servers and SCRAM credential storage."""
