"""Reads the simulated Jira of package jiratest with the jira library (Debian's
python3-jira), the client of Onyx's Jira connector, as that connector and its
permission syncs read Jira, and prints what it read as JSON for the Go test
(TestJiraLibrary) to compare with what the simulator holds.

Usage: jira_check.py BASE_URL EMAIL TOKEN
"""

import json
import sys

from jira import JIRA
from jira.exceptions import JIRAError
from jira.resources import Issue


def adf_text(node):
    # Onyx's extract_text_from_adf: the text nodes, joined by spaces.
    texts = []

    def walk(n):
        if n.get("type") == "text" and n.get("text"):
            texts.append(n["text"])
        for c in n.get("content", []):
            walk(c)

    if node is not None:
        walk(node)
    return " ".join(texts)


def name(obj):
    return obj.name if obj else None


def issue_dict(issue):
    f = issue.fields
    desc = f.description
    comments = []
    # python3-jira 3.4.1 leaves an issue's comments as PropertyHolders
    # (no raw): their ADF bodies are read from the issue's raw fields.
    for c, raw in zip(f.comment.comments, issue.raw["fields"]["comment"]["comments"]):
        body = c.body if isinstance(c.body, str) else adf_text(raw["body"])
        email = getattr(c.author, "emailAddress", None) if hasattr(c, "author") else None
        comments.append({"body": body, "author_email": email})
    return {
        "id": issue.id,
        "key": issue.key,
        "summary": f.summary,
        "description": desc if isinstance(desc, str) or desc is None else adf_text(issue.raw["fields"]["description"]),
        "status": name(f.status),
        "priority": name(f.priority),
        "issuetype": name(f.issuetype),
        "resolution": name(f.resolution),
        "labels": list(f.labels),
        "reporter": f.reporter.displayName if f.reporter else None,
        "reporter_email": getattr(f.reporter, "emailAddress", None) if f.reporter else None,
        "assignee": f.assignee.displayName if f.assignee else None,
        "created": f.created,
        "updated": f.updated,
        "duedate": f.duedate,
        "resolutiondate": f.resolutiondate,
        "parent": f.parent.key if hasattr(f, "parent") else None,
        "project": [f.project.key, f.project.name],
        "comments": comments,
    }


def main():
    base, email, token = sys.argv[1:4]
    out = {}
    client = JIRA(server=base, basic_auth=(email, token), options={"rest_api_version": "3"})

    # Onyx's enhanced_search_ids: GET search/jql through the library's
    # session, nextPageToken pages; then bulk_fetch_issues.
    jql = "updated >= 0 AND updated <= 4102444800000"
    ids, token_, pages = [], None, 0
    while True:
        resp = client._session.get(
            client._get_url("search/jql"),
            params={"jql": jql, "maxResults": 5000, "nextPageToken": token_, "fields": "id"},
        )
        resp.raise_for_status()
        body = resp.json()
        pages += 1
        ids += [str(i["id"]) for i in body["issues"]]
        token_ = body.get("nextPageToken")
        if token_ is None:
            break
    out["search_pages"] = pages
    raw = client._session.post(
        client._get_url("issue/bulkfetch"), json={"issueIdsOrKeys": ids, "fields": ["*all"]}
    ).json()["issues"]
    issues = [Issue(client._options, client._session, raw=r) for r in raw]
    out["issues"] = [issue_dict(i) for i in issues]

    # A JQL the simulator does not take: Jira's 400 body.
    try:
        resp = client._session.get(client._get_url("search/jql"), params={"jql": "text ~ x", "fields": "id"})
        resp.raise_for_status()
        out["bad_jql"] = None
    except JIRAError as e:
        out["bad_jql"] = [e.status_code, e.response.json()["errorMessages"][0][:22]]

    # Onyx's group sync: groups() (groups/picker), then group/member pages.
    out["groups"] = {}
    for g in client.groups():
        emails, start = [], 0
        while True:
            page = client._get_json(
                "group/member",
                params={"groupname": g, "includeInactiveUsers": "false", "startAt": start, "maxResults": 50},
            )
            for m in page.get("values", []):
                emails.append([m.get("emailAddress"), m.get("accountType")])
            if page.get("isLast", True) or not page.get("values"):
                break
            start += len(page["values"])
        out["groups"][g] = emails

    # Onyx's page_access: the permission scheme's holders, the roles'
    # actors, users read by account id.
    out["projects"] = {}
    for key in ["ENG", "OPS", "SEC"]:
        scheme = client.project_permissionscheme(key)
        holders = []
        for p in scheme.permissions:
            h = p.raw["holder"]
            holders.append([p.raw["permission"], h["type"], h.get("parameter"), (h.get("user") or {}).get("emailAddress")])
        roles = {}
        for h in holders:
            if h[1] == "projectRole":
                role = client.project_role(key, h[2])
                actors = []
                for a in role.actors:
                    if hasattr(a, "actorGroup"):
                        actors.append(["group", a.actorGroup.name])
                    else:
                        u = client.user(a.actorUser.accountId)
                        actors.append(["user", getattr(u, "emailAddress", None)])
                roles[h[2]] = actors
        out["projects"][key] = {"holders": holders, "roles": roles}

    # Data Center: a personal access token, the v2 search by startAt
    # (maxResults=False: the library pages through the simulator's small
    # pages by startAt until total).
    dc = JIRA(server=base, token_auth=token, options={"rest_api_version": "2"})
    found = dc.search_issues('project = "ENG" AND updated >= 0 AND updated <= 4102444800000', startAt=0, maxResults=False)
    out["dc_keys"] = [i.key for i in found]
    out["dc_description"] = dc.search_issues('project = "OPS" AND updated >= 0 AND updated <= 4102444800000', maxResults=1)[0].fields.description

    # A refused token: Jira's 401.
    try:
        JIRA(server=base, basic_auth=(email, "wrong"), options={"rest_api_version": "3"}, max_retries=0)
        out["refused"] = None
    except JIRAError as e:
        out["refused"] = [e.status_code, e.text]

    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
