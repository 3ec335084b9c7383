"""`-cc <condition>`: evaluate a `.if` condition; exit 0 true, 1 false, 2 error (like haproxy)."""
from sluice_harness import run_sluice


def test_cc_true():
    rc, out, err = run_sluice(["-cc", "streq(a,a)"])
    assert rc == 0, err


def test_cc_false():
    rc, out, err = run_sluice(["-cc", "streq(a,b)"])
    assert rc == 1, err


def test_cc_error():
    rc, out, err = run_sluice(["-cc", "bogus("])
    assert rc == 2, (out, err)
    assert err.strip(), "an evaluation error must say what is wrong"


def test_cc_error_messages():
    # The message is printed once, with its own prefix (spec 2, -cc).
    rc, out, err = run_sluice(["-cc", "foo(1)"])
    assert rc == 2, (out, err)
    assert err.rstrip("\n").endswith(
        " : Failed to evaluate condition: unparsable conditional expression 'foo(1)'"), err
    assert err.count("Failed to evaluate condition") == 1, err
    rc, out, err = run_sluice(["-cc", '"unterminated'])
    assert rc == 2, (out, err)
    assert err.rstrip("\n").endswith(" : Syntax Error in condition: Unmatched quote."), err


def test_cc_boolean_operators():
    assert run_sluice(["-cc", "streq(a,b) || 1"])[0] == 0
    assert run_sluice(["-cc", "1 && !1"])[0] == 1
