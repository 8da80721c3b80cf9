"""access/policy.py alone: the visibility each caller gets, as the filters the repositories run."""

import pytest
from bson import ObjectId

from access import policy
from access.callers import Caller
from access.policy import EVERYTHING, NOTHING, Visibility
from domain.errors import Forbidden

ACME = ObjectId("aaaaaaaaaaaaaaaaaaaaaaaa")
OTHER = ObjectId("bbbbbbbbbbbbbbbbbbbbbbbb")
USER = ObjectId("cccccccccccccccccccccccc")

CALLERS = {
    "member": Caller.user(USER, [ACME]),
    "member of both": Caller.user(USER, [OTHER, ACME]),
    "loner": Caller.user(USER, []),
    "admin": Caller.user(USER, [], is_admin=True),
    "admin member": Caller.user(USER, [ACME], is_admin=True),
    "acme token": Caller.organization(ACME),
}

PUBLIC = {"isPublic": True}
OF_ACME = {"organization": {"$in": [ACME]}}
OF_BOTH = {"organization": {"$in": [ACME, OTHER]}}


@pytest.mark.parametrize(
    ("caller", "custom", "expected"),
    [
        ("member", False, Visibility.of(PUBLIC, OF_ACME)),
        ("member", True, Visibility.of(OF_ACME)),
        ("member of both", False, Visibility.of(PUBLIC, OF_BOTH)),
        ("member of both", True, Visibility.of(OF_BOTH)),
        ("loner", False, Visibility.of(PUBLIC)),
        ("loner", True, NOTHING),
        ("admin", False, EVERYTHING),
        ("admin", True, NOTHING),
        ("admin member", False, EVERYTHING),
        ("admin member", True, Visibility.of(OF_ACME)),
        ("acme token", False, Visibility.of(PUBLIC)),
        ("acme token", True, Visibility.of(OF_ACME)),
    ],
)
def test_bot_list(caller, custom, expected):
    assert policy.bots(CALLERS[caller], custom) == expected


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        ("member", Visibility.of(PUBLIC, OF_ACME)),
        ("loner", Visibility.of(PUBLIC)),
        ("admin", EVERYTHING),
        ("admin member", EVERYTHING),
        ("acme token", Visibility.of(PUBLIC, OF_ACME)),
    ],
)
def test_single_bot_is_what_the_caller_could_list_with_any_parameters(caller, expected):
    assert policy.bot_access(CALLERS[caller]).visibility == expected


@pytest.mark.parametrize(
    ("caller", "details"),
    [
        ("member", False),
        ("loner", False),
        ("admin", True),
        ("admin member", True),
        ("acme token", False),
    ],
)
def test_only_admins_see_bot_details(caller, details):
    assert policy.bot_access(CALLERS[caller]).detailed is details


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        ("member", Visibility.of({"createdBy": USER}, OF_ACME)),
        ("member of both", Visibility.of({"createdBy": USER}, OF_BOTH)),
        ("loner", Visibility.of({"createdBy": USER})),
        ("admin", Visibility.of({"createdBy": USER})),
        ("admin member", Visibility.of({"createdBy": USER}, OF_ACME)),
    ],
)
def test_user_bot_requests(caller, expected):
    assert policy.bot_requests(CALLERS[caller]) == expected


def test_organization_token_has_no_user_bot_requests():
    with pytest.raises(Forbidden):
        policy.bot_requests(CALLERS["acme token"])


@pytest.mark.parametrize(
    ("caller", "organization", "allowed"),
    [
        ("member", ACME, True),
        ("member", OTHER, False),
        ("member of both", OTHER, True),
        ("loner", ACME, False),
        ("admin", ACME, False),
        ("admin member", ACME, True),
        ("acme token", ACME, True),
        ("acme token", OTHER, False),
    ],
)
def test_organization_is_for_members_and_its_own_token(caller, organization, allowed):
    if allowed:
        expected = Visibility.of({"organization": organization})
        assert policy.organization(CALLERS[caller], organization) == expected
    else:
        with pytest.raises(Forbidden):
            policy.organization(CALLERS[caller], organization)


@pytest.mark.parametrize(
    ("caller", "organization", "expected"),
    [
        ("member", ACME, Visibility.of({"organization": ACME})),
        ("member", OTHER, Visibility.of({"organization": OTHER, "createdBy": USER})),
        ("loner", ACME, Visibility.of({"organization": ACME, "createdBy": USER})),
        ("admin", ACME, Visibility.of({"organization": ACME, "createdBy": USER})),
        ("acme token", ACME, Visibility.of({"organization": ACME})),
    ],
)
def test_organization_bot_request(caller, organization, expected):
    assert policy.organization_bot_request(CALLERS[caller], organization) == expected


def test_organization_bot_request_refuses_another_organizations_token():
    with pytest.raises(Forbidden):
        policy.organization_bot_request(CALLERS["acme token"], OTHER)


@pytest.mark.parametrize(
    ("visibility", "as_filter"),
    [
        (EVERYTHING, {}),
        (Visibility.of(PUBLIC), PUBLIC),
        (Visibility.of(PUBLIC, OF_ACME), {"$or": [PUBLIC, OF_ACME]}),
    ],
)
def test_visibility_as_one_filter(visibility, as_filter):
    assert visibility.as_filter() == as_filter
    assert not visibility.is_empty


def test_nothing_is_empty():
    assert NOTHING.is_empty
    assert EVERYTHING.is_empty is False


def test_as_filter_hands_out_copies():
    """A repository that extends the filter must not change the policy's branches."""
    visibility = Visibility.of({"isPublic": True})
    visibility.as_filter()["slug"] = "x"
    assert visibility.branches == ({"isPublic": True},)


@pytest.mark.parametrize("caller", ["member", "loner", "admin"])
def test_a_users_own_usage_is_what_it_made_wherever(caller):
    assert policy.own_usage(CALLERS[caller]) == Visibility.of({"createdBy": USER})


def test_an_organization_token_has_no_usage_of_its_own():
    with pytest.raises(Forbidden):
        policy.own_usage(CALLERS["acme token"])


def test_a_visibility_key_tells_apart_what_python_would_take_as_equal():
    """1 == True in Python, not in MongoDB: two such visibilities never share a cache entry."""
    assert policy.Visibility.of({"isPublic": True}) == policy.Visibility.of({"isPublic": 1})
    assert policy.Visibility.of({"isPublic": True}).key != policy.Visibility.of({"isPublic": 1}).key


def test_the_same_caller_gets_the_same_catalogue_access_each_time():
    caller = Caller.user(ObjectId(), [ObjectId()])
    again = Caller.user(caller.id, caller.organization_ids)

    assert policy.bot_access(again) is policy.bot_access(caller)
    assert policy.bots(again, False) is policy.bots(caller, False)
    assert policy.bots(caller, True) != policy.bots(caller, False)
