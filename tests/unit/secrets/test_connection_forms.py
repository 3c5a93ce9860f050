"""Connection URI and JSON forms as Airflow reads and writes them; bad input named clearly."""

from __future__ import annotations

import json

import pytest

from statewright.sdk.connection import Connection, InvalidConnection


def test_uri_parts_are_decoded_and_the_query_is_the_extra() -> None:
    c = Connection(conn_id="wh", uri="postgresql://us%40er:p%2Fss%3Aw@db.example.org:5432/"
                                     "my%2Fdb?sslmode=require&connect_timeout=10")
    assert (c.conn_type, c.host, c.port, c.schema) == ("postgres", "db.example.org", 5432,
                                                      "my/db")
    assert (c.login, c.password) == ("us@er", "p/ss:w")
    assert c.extra_dejson == {"sslmode": "require", "connect_timeout": "10"}


def test_get_uri_round_trips() -> None:
    c = Connection(conn_id="x", conn_type="my_type", host="h.example", login="a b",
                   password="p@ss/word", port=1234, schema="s", extra='{"k": "v"}')
    again = Connection(conn_id="x", uri=c.get_uri())
    assert c.get_uri() == "my-type://a%20b:p%40ss%2Fword@h.example:1234/s?k=v"
    assert again.to_dict() == {**c.to_dict(), "conn_type": "my_type"}


def test_nested_extra_travels_in_the_extra_parameter() -> None:
    c = Connection(conn_id="x", conn_type="http", host="h", extra={"nested": {"a": [1, 2]}})
    uri = c.get_uri()
    assert "__extra__=" in uri
    assert Connection(conn_id="x", uri=uri).extra_dejson == {"nested": {"a": [1, 2]}}


def test_a_protocol_in_the_host_survives() -> None:
    c = Connection(conn_id="api", uri="http://https%3A%2F%2Fapi.example.org")
    assert c.conn_type == "http" and c.host == "https://api.example.org"
    c2 = Connection(conn_id="api", uri="http://https://api.example.org:8443")
    assert c2.host == "https://api.example.org" and c2.port == 8443
    assert Connection(conn_id="api", uri=c2.get_uri()).host == "https://api.example.org"


def test_json_form_with_extra_as_object_or_text() -> None:
    a = Connection.from_json({"conn_type": "postgres", "host": "h", "port": "5432",
                              "extra": {"sslmode": "require"}}, conn_id="a")
    b = Connection.from_json(json.dumps({"conn_type": "postgres", "host": "h", "port": 5432,
                                         "extra": '{"sslmode": "require"}'}), conn_id="a")
    assert a.to_dict() == b.to_dict() and a.port == 5432


@pytest.mark.parametrize("uri, words", [
    ("no-scheme-here", "malformed"),
    ("postgres://u:pw@host:notaport/db", "malformed"),
    ("a://b://c://d", "malformed"),
    ("postgres://u:pw@host:99999/db", "malformed"),
])
def test_malformed_uri_is_named_and_hides_the_password(uri: str, words: str) -> None:
    with pytest.raises(InvalidConnection) as exc:
        Connection(conn_id="bad", uri=uri)
    assert "'bad'" in str(exc.value) and words in str(exc.value)
    assert ":pw@" not in str(exc.value)


def test_invalid_json_in_extra_is_an_error_naming_the_connection() -> None:
    with pytest.raises(InvalidConnection, match=r"'c1'.*extra is not valid JSON"):
        Connection(conn_id="c1", conn_type="postgres", extra="{not json")
    with pytest.raises(InvalidConnection, match="extra must be a JSON object"):
        Connection(conn_id="c1", conn_type="postgres", extra="[1, 2]")


def test_json_form_errors() -> None:
    with pytest.raises(InvalidConnection, match="not valid JSON"):
        Connection.from_json("{oops", conn_id="j")
    with pytest.raises(InvalidConnection, match=r"unknown field.*hostname"):
        Connection.from_json({"conn_type": "x", "hostname": "h"}, conn_id="j")
    with pytest.raises(InvalidConnection, match="port 'abc' is not a number"):
        Connection.from_json({"conn_type": "x", "port": "abc"}, conn_id="j")
