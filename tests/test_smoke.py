from tests.factories import bearer


def test_member_lists_public_and_own_bots(client, world):
    acme = world.organization("Acme")
    other = world.organization("Other")
    ada = world.user("Ada", organizations=[acme])
    world.bot("public-bot")
    world.bot("acme-private", organization=acme, is_public=False)
    world.bot("other-private", organization=other, is_public=False)
    token = world.token(user=ada)

    response = client.get("/v1/bots/", headers=bearer(token))

    assert response.status_code == 200
    body = response.get_json()
    assert [bot["slug"] for bot in body["results"]] == ["acme-private", "public-bot"]
    assert body["totalResults"] == 2
