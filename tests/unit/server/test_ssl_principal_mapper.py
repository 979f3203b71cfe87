"""SslPrincipalMapper rules and the RFC 2253 text of a certificate subject (Kafka's SslPrincipalMapperTest cases)."""

from __future__ import annotations

import pytest

from kafkapy.server.network.ssl_principal_mapper import SslPrincipalMapper, distinguished_name


def test_distinguished_name_is_rfc2253_most_specific_first():
    subject = ((("countryName", "US"),), (("organizationName", "Acme, Inc."),), (("organizationalUnitName", "eng"),),
               (("commonName", "client"),))
    assert distinguished_name(subject) == "CN=client,OU=eng,O=Acme\\, Inc.,C=US"


@pytest.mark.parametrize("rules,dn,expected", [
    ("DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka1,OU=ServiceUsers,O=Org,C=US", "kafka1"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun,C=US", "CN=Duke,OU=JavaSoft,O=Sun,C=US"),
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L", "CN=Duke,OU=JavaSoft,O=Sun,L=SC,ST=CA,C=US",
     "duke@javasoft"),
    ("RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U", "OU=x,CN=Alice.Example", "ALICE.EXAMPLE"),
])
def test_rules(rules, dn, expected):
    assert SslPrincipalMapper(rules).get_name(dn) == expected


def test_bad_rules_are_refused():
    with pytest.raises(ValueError):
        SslPrincipalMapper("RULE:^CN=(.*)$/$1/X/,junk")
