"""Reads the Google Drive simulator with Google's own Python client.

googleapiclient (Debian's python3-googleapi) builds its Drive v3 and Admin
Directory v1 services from the discovery documents google.golang.org/api
ships, pointed at the simulator; google-auth (python3-google-auth) signs
the service account's JWT and exchanges it at the simulator's token
endpoint, impersonating a user. It prints what it read as JSON, for
drivetest's TestGoogleAPIClient to compare with what the simulator holds.

Usage: googleapi_check.py BASE_URL KEY_FILE OTHER_KEY_FILE DRIVE_DOC ADMIN_DOC REFRESH_TOKEN

REFRESH_TOKEN is Bob's, of the simulator's OAuth client: google-auth's
authorized user credentials (no access token yet) refresh it at the
simulator's token endpoint, and list Bob's files.
"""

import json
import sys

import google_auth_httplib2
import httplib2
from google.auth.exceptions import RefreshError
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from googleapiclient.discovery import build_from_document
from googleapiclient.errors import HttpError

SCOPES = [
    "https://www.googleapis.com/auth/drive.readonly",
    "https://www.googleapis.com/auth/drive.metadata.readonly",
    "https://www.googleapis.com/auth/admin.directory.group.readonly",
    "https://www.googleapis.com/auth/admin.directory.user.readonly",
]
FOLDER = "application/vnd.google-apps.folder"
FIELDS = (
    "nextPageToken, files(mimeType, id, name, driveId, parents, "
    "permissions(id, emailAddress, type, domain, allowFileDiscovery, permissionDetails), permissionIds, "
    "createdTime, modifiedTime, webViewLink, shortcutDetails, owners(emailAddress), size)"
)
EXPORT = {
    "application/vnd.google-apps.document": "text/plain",
    "application/vnd.google-apps.spreadsheet": "text/csv",
}


def main():
    base, key_file, other_file, drive_doc, admin_doc, refresh = sys.argv[1:7]
    info = json.load(open(key_file))
    other = json.load(open(other_file))
    docs = {}
    for name, path in (("drive", drive_doc), ("admin", admin_doc)):
        doc = json.load(open(path))
        doc["rootUrl"] = base
        doc["baseUrl"] = base + doc["servicePath"]
        docs[name] = doc

    def service(name, subject, key=info):
        creds = service_account.Credentials.from_service_account_info(key, scopes=SCOPES, subject=subject)
        http = google_auth_httplib2.AuthorizedHttp(creds, http=httplib2.Http())
        return build_from_document(docs[name], http=http)

    def pages(collection, method, key, **kwargs):
        req = getattr(collection, method)(**kwargs)
        items, n = [], 0
        while req is not None:
            # num_retries: the client waits out the simulator's 403
            # userRateLimitExceeded and asks again.
            res = req.execute(num_retries=3)
            n += 1
            items.extend(res.get(key, []))
            req = getattr(collection, method + "_next")(req, res)
        return items, n

    out = {"pages": {}}
    admin = service("drive", "admin@example.com")
    drives, out["pages"]["drives"] = pages(admin.drives(), "list", "drives", useDomainAdminAccess=True, pageSize=100)
    out["drives"] = [d["id"] for d in drives]

    files = {}
    for user in ("alice@example.com", "bob@example.com", "carol@example.com"):
        drive = service("drive", user)
        listed, n = pages(
            drive.files(), "list", "files", corpora="user", orderBy="modifiedTime", fields=FIELDS,
            q="mimeType != '%s' and trashed = false and 'me' in owners" % FOLDER,
        )
        out["pages"][user] = n
        for f in listed:
            files[f["id"]] = (f, drive)
    alice = service("drive", "alice@example.com")
    for d in out["drives"]:
        listed, n = pages(
            alice.files(), "list", "files", corpora="drive", driveId=d, supportsAllDrives=True,
            includeItemsFromAllDrives=True, orderBy="modifiedTime", fields=FIELDS,
            q="mimeType != '%s' and trashed = false" % FOLDER,
        )
        out["pages"][d] = n
        for f in listed:
            files[f["id"]] = (f, alice)

    out["files"] = {}
    for fid, (f, drive) in sorted(files.items()):
        if f["mimeType"] in EXPORT:
            content = drive.files().export(fileId=fid, mimeType=EXPORT[f["mimeType"]]).execute()
        elif f["mimeType"].startswith("application/vnd.google-apps."):
            content = b""
        else:
            content = drive.files().get_media(fileId=fid, supportsAllDrives=True).execute()
        perms, _ = pages(
            drive.permissions(), "list", "permissions", fileId=fid, supportsAllDrives=True,
            fields="nextPageToken, permissions(id, emailAddress, type, domain, allowFileDiscovery, permissionDetails)",
        )
        out["files"][fid] = {
            "name": f["name"], "mimeType": f["mimeType"], "webViewLink": f["webViewLink"],
            "modifiedTime": f["modifiedTime"], "content": content.decode("utf-8", "replace"),
            "permissions": sorted(p["type"] + ":" + p.get("emailAddress", p.get("domain", "")) for p in perms),
            "size": f.get("size"),
        }

    # A folder crawled as the connector (and Onyx's crawl_folders_for_files)
    # does: its folders, then its files, '<id>' in parents over allDrives.
    out["folders"] = {}
    todo = ["1FolderA"]
    while todo:
        folder = todo.pop(0)
        sub, _ = pages(
            alice.files(), "list", "files", corpora="allDrives", supportsAllDrives=True, includeItemsFromAllDrives=True,
            fields=FIELDS, q="mimeType = '%s' and trashed = false and '%s' in parents" % (FOLDER, folder),
        )
        todo.extend(f["id"] for f in sub)
        listed, _ = pages(
            alice.files(), "list", "files", corpora="allDrives", supportsAllDrives=True, includeItemsFromAllDrives=True,
            orderBy="modifiedTime", fields=FIELDS, q="mimeType != '%s' and '%s' in parents and trashed = false" % (FOLDER, folder),
        )
        out["folders"][folder] = sorted([f["id"] for f in sub] + [f["id"] for f in listed])

    directory = service("admin", "admin@example.com")
    users, _ = pages(directory.users(), "list", "users", domain="example.com", query="isAdmin=false")
    out["users"] = [u["primaryEmail"] for u in users]
    groups, _ = pages(directory.groups(), "list", "groups", domain="example.com")
    out["groups"] = {}
    for g in groups:
        members, _ = pages(directory.members(), "list", "members", groupKey=g["email"])
        out["groups"][g["email"]] = [m["email"] for m in members]

    try:
        service("admin", "alice@example.com").users().list(domain="example.com").execute()
    except HttpError as e:
        body = json.loads(e.content)
        out["not_admin"] = [e.resp.status, body["error"]["errors"][0]["reason"], body["error"]["message"]]

    bob = user_credentials.Credentials(
        None, refresh_token=refresh, client_id="1234567890-sim.apps.googleusercontent.com",
        client_secret="GOCSPX-sim-client-secret", token_uri=base + "token", scopes=SCOPES,
    )
    bob_drive = build_from_document(docs["drive"], http=google_auth_httplib2.AuthorizedHttp(bob, http=httplib2.Http()))
    listed, _ = pages(bob_drive.files(), "list", "files", corpora="user", fields=FIELDS,
                      q="mimeType != '%s' and trashed = false and 'me' in owners" % FOLDER)
    out["oauth_files"] = sorted(f["id"] for f in listed)

    try:
        alice.files().get(fileId="no-such-file", supportsAllDrives=True).execute()
    except HttpError as e:
        body = json.loads(e.content)
        out["not_found"] = [e.resp.status, body["error"]["errors"][0]["reason"], body["error"]["message"]]
    try:
        service("drive", "admin@example.com", key=other).files().list(corpora="user").execute()
    except RefreshError as e:
        out["refused"] = str(e.args[0])
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
