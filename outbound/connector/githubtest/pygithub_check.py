"""Reads the simulated GitHub of package githubtest with PyGithub, the client
of Onyx's GitHub connector, as that connector and its permission syncs read
GitHub, and prints what it read as JSON for the Go test (TestPyGithub) to
compare with what the simulator holds.

Usage: pygithub_check.py BASE_URL TOKEN ORG
"""

import json
import sys

import github
from github import Github


def user(u):
    # Reading name and email completes the user (GET /users/{login}), as
    # Onyx's _get_userinfo and its permission syncs do.
    return {"login": u.login, "name": u.name, "email": u.email}


def main():
    base, token, org_login = sys.argv[1:4]
    out = {}
    # Onyx's load_credentials: per_page=100 (the simulator pages smaller).
    gh = Github(token, base_url=base, per_page=100)
    org = gh.get_organization(org_login)
    out["org_id"] = org.id
    repos = list(org.get_repos())  # Follows the Link headers.
    out["repos"] = []
    for repo in repos:
        r = {
            "id": repo.id,
            "full_name": repo.full_name,
            "private": repo.private,
            "visibility": repo.raw_data.get("visibility"),
            "organization_id": repo.organization.id if repo.organization else None,
        }
        # Fetched again by id, as the connector's checkpoint does.
        r["by_id"] = gh.get_repo(repo.id).full_name
        # Onyx's _pull_requests_func and _issues_func, read every page by
        # number as _get_batch_rate_limited does (get_page), then all at
        # once through the Link headers.
        pulls_func = lambda: repo.get_pulls(state="all", sort="updated", direction="desc")
        paged = []
        page = 0
        while True:
            batch = pulls_func().get_page(page)
            if not batch:
                break
            paged.extend(batch)
            page += 1
        r["pull_pages"] = page
        r["pulls"] = [
            {
                "number": p.number,
                "title": p.title,
                "body": p.body,
                "state": p.state,
                "html_url": p.html_url,
                "updated_at": p.updated_at.isoformat(),
                "created_at": p.created_at.isoformat(),
                "closed_at": p.closed_at.isoformat() if p.closed_at else None,
                "merged": p.merged,  # Completes the pull request.
                "commits": p.commits,
                "changed_files": p.changed_files,
                "base_repo": p.base.repo.full_name,
                "user": user(p.user),
                "assignees": [user(a) for a in p.assignees],
                "labels": [label.name for label in p.labels],
            }
            for p in paged
        ]
        r["pulls_linked"] = [p.number for p in pulls_func()]
        issues = list(repo.get_issues(state="all", sort="updated", direction="desc"))
        r["issues"] = [
            {
                "number": i.number,
                "title": i.title,
                "body": i.body,
                "state": i.state,
                "html_url": i.html_url,
                "is_pull": i.pull_request is not None,
                "updated_at": i.updated_at.isoformat(),
                "closed_by": i.closed_by.login if i.closed_by else None,  # Completes the issue.
                "user": user(i.user),
                "assignees": [user(a) for a in i.assignees],
                "labels": [label.name for label in i.labels],
            }
            for i in issues
        ]
        # Onyx's permission syncs.
        collaborators = []
        for c in repo.get_collaborators():
            info = user(c)
            info["in_org"] = org.has_in_members(c)
            collaborators.append(info)
        r["collaborators"] = collaborators
        r["teams"] = [
            {"slug": t.slug, "name": t.name, "members": [user(m) for m in t.get_members()]}
            for t in repo.get_teams()
        ]
        # Onyx's files stage: the tree of the default branch, then each
        # file's content.
        try:
            tree = repo.get_git_tree(repo.default_branch, recursive=True)
            r["tree"] = {
                "truncated": tree.raw_data.get("truncated"),
                "entries": [[e.path, e.type, e.size] for e in tree.tree],
            }
            r["contents"] = {
                e.path: repo.get_contents(e.path, ref=repo.default_branch).decoded_content.decode("latin-1")
                for e in tree.tree
                if e.type == "blob"
            }
        except github.GithubException as e:
            r["tree"] = {"status": e.status, "message": e.data.get("message")}
        out["repos"].append(r)
    out["org_members"] = [user(m) for m in org.get_members(filter_="all")]

    # A token GitHub refuses.
    try:
        Github("not-the-token", base_url=base).get_organization(org_login).id
        out["bad_token"] = None
    except github.BadCredentialsException as e:
        out["bad_token"] = {"status": e.status, "message": e.data.get("message")}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
