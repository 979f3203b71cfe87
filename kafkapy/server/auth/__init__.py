"""Broker-side authorization: the ACL authorizer (Kafka's AclAuthorizer / StandardAuthorizer)."""
