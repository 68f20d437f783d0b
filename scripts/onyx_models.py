#!/usr/bin/env python3
"""Write the table of Onyx's pydantic models that Quarry's Onyx replay mirrors.

Usage:

  python3 scripts/onyx_models.py ONYX_CHECKOUT [--version v4.6.1] \
      > api/onyxtest/testdata/onyx-v4.6.1-models.json

ONYX_CHECKOUT is a checkout of onyx-dot-app/onyx at the tag named by
--version (the repository root, or its backend/ directory), for instance:

  git --git-dir=/work/.mirror/onyx-dot-app+onyx/repo archive v4.6.1 backend | tar -x -C /tmp/onyx

The script reads the source with Python's ast module (it imports nothing
from Onyx, and needs neither Onyx's dependencies nor a network). For each
model in ROOTS, and every model and enumeration their fields name (followed
through Onyx's imports), it records the fields in the order pydantic 2 gives
them (a base class's fields first; a field a subclass declares again keeps
its base's place and takes the subclass's type and default), each with its
annotation as written, the annotation as a tree (for the Go tests), and
whether it is required (and "excluded": true for a field that pydantic
leaves out of its dumps, Field(exclude=True), so that FastAPI never writes
it). Enumerations get their values in declaration order.

Models the mirrors do not describe field by field (Quarry always answers an
empty list of them) are listed under "opaque" with the file they live in.
Module-level type aliases are expanded in place.

api/onyxtest reads the table (embedded) to check its mirrors of the models,
and to check the server's live answers. Go tests never run this script.
"""

import argparse
import ast
import json
import os
import re
import sys

# The models the replay sends or parses, as (module, class). Everything they
# name is followed from there.
ROOTS = [
    # Connectors, credentials, cc-pairs, indexing status.
    ("onyx.server.documents.models", "ConnectorBase"),
    ("onyx.server.documents.models", "ConnectorUpdateRequest"),
    ("onyx.server.documents.models", "ConnectorSnapshot"),
    ("onyx.server.documents.models", "CredentialBase"),
    ("onyx.server.documents.models", "CredentialSnapshot"),
    ("onyx.server.documents.models", "CredentialDataUpdateRequest"),
    ("onyx.server.documents.models", "ObjectCreationIdResponse"),
    ("onyx.server.documents.models", "DeletionAttemptSnapshot"),
    ("onyx.server.documents.models", "CCPairFullInfo"),
    ("onyx.server.documents.models", "ConnectorStatus"),
    ("onyx.server.documents.models", "ConnectorIndexingStatus"),
    ("onyx.server.documents.models", "ConnectorIndexingStatusLite"),
    ("onyx.server.documents.models", "SourceSummary"),
    ("onyx.server.documents.models", "ConnectorIndexingStatusLiteResponse"),
    ("onyx.server.documents.models", "IndexingStatusRequest"),
    ("onyx.server.documents.models", "ConnectorCredentialPairIdentifier"),
    ("onyx.server.documents.models", "ConnectorCredentialPairMetadata"),
    ("onyx.server.documents.models", "CCStatusUpdateRequest"),
    ("onyx.server.documents.models", "ConnectorCredentialPairDescriptor"),
    ("onyx.server.documents.models", "RunConnectorRequest"),
    ("onyx.server.documents.models", "DocumentSyncStatus"),
    ("onyx.server.documents.models", "PaginatedReturn"),
    ("onyx.server.documents.models", "IndexAttemptSnapshot"),
    ("onyx.server.documents.models", "FileUploadResponse"),
    ("onyx.server.documents.models", "ConnectorFilesResponse"),
    ("onyx.background.indexing.models", "IndexAttemptErrorPydantic"),
    # The ingestion API (its answers; IngestionDocument names Onyx's section
    # types, whose Literal annotations the table does not follow).
    ("onyx.server.onyx_api.models", "IngestionResult"),
    ("onyx.server.onyx_api.models", "DocMinimalInfo"),
    # The sources to search by (GET /manage/indexed-sources).
    ("onyx.server.documents.models", "IndexedSourcesResponse"),
    # Onyx's search API.
    ("ee.onyx.server.query_and_chat.models", "SendSearchQueryRequest"),
    ("ee.onyx.server.query_and_chat.models", "SearchFullResponse"),
    ("onyx.server.features.search.models", "SearchRequest"),
    ("onyx.server.features.search.models", "SearchResponse"),
    # Tags.
    ("onyx.server.query_and_chat.models", "TagResponse"),
    # Responses shared by many routes, people.
    ("onyx.server.models", "StatusResponse"),
    ("onyx.server.models", "FullUserSnapshot"),
    ("onyx.server.models", "UserGroupInfo"),
    ("onyx.server.models", "InvitedUserSnapshot"),
    ("onyx.server.manage.models", "UserInfo"),
    ("onyx.server.manage.models", "UserRoleUpdateRequest"),
    ("onyx.server.manage.models", "UserByEmail"),
    ("onyx.server.manage.models", "AllUsersResponse"),
    ("onyx.auth.schemas", "UserRead"),
    # User groups and their permissions.
    ("ee.onyx.server.user_group.models", "UserGroup"),
    ("ee.onyx.server.user_group.models", "UserGroupCreate"),
    ("ee.onyx.server.user_group.models", "UserGroupUpdate"),
    ("ee.onyx.server.user_group.models", "AddUsersToUserGroupRequest"),
    ("ee.onyx.server.user_group.models", "SetCuratorRequest"),
    ("ee.onyx.server.user_group.models", "SetPermissionRequest"),
    ("ee.onyx.server.user_group.models", "SetPermissionResponse"),
    # Document sets.
    ("onyx.server.features.document_set.models", "DocumentSetCreationRequest"),
    ("onyx.server.features.document_set.models", "DocumentSetUpdateRequest"),
    ("onyx.server.features.document_set.models", "CheckDocSetPublicRequest"),
    ("onyx.server.features.document_set.models", "CheckDocSetPublicResponse"),
    ("onyx.server.features.document_set.models", "DocumentSetSummary"),
    # API keys.
    ("onyx.server.api_key.models", "APIKeyArgs"),
    ("onyx.auth.api_key", "ApiKeyDescriptor"),
    # Tools.
    ("onyx.server.features.tool.models", "ToolSnapshot"),
    ("onyx.server.features.tool.models", "Header"),
    ("onyx.server.features.tool.models", "CustomToolCreate"),
    ("onyx.server.features.tool.models", "CustomToolUpdate"),
    ("onyx.server.features.tool.api", "ToolStatusUpdateResponse"),
    # Personal access tokens.
    ("onyx.server.pat.models", "CreateTokenRequest"),
    ("onyx.server.pat.models", "TokenResponse"),
    ("onyx.server.pat.models", "CreatedTokenResponse"),
    # Model providers.
    ("onyx.server.manage.llm.models", "LLMProviderUpsertRequest"),
    ("onyx.server.manage.llm.models", "ModelConfigurationUpsertRequest"),
    ("onyx.server.manage.llm.models", "LLMProviderView"),
    ("onyx.server.manage.llm.models", "LLMProviderDescriptor"),
    ("onyx.server.manage.llm.models", "ModelConfigurationView"),
    ("onyx.server.manage.llm.models", "LLMProviderResponse"),
    ("onyx.server.manage.llm.models", "DefaultModel"),
    ("onyx.server.manage.llm.models", "TestLLMRequest"),
    # MCP servers.
    ("onyx.server.features.mcp.models", "MCPServer"),
    ("onyx.server.features.mcp.models", "MCPServersResponse"),
    ("onyx.server.features.mcp.models", "MCPServerCreateResponse"),
    ("onyx.server.features.mcp.models", "MCPServerUpdateResponse"),
    ("onyx.server.features.mcp.models", "MCPToolCreateRequest"),
    ("onyx.server.features.mcp.models", "MCPToolUpdateRequest"),
    ("onyx.server.features.mcp.models", "MCPServerSimpleCreateRequest"),
    ("onyx.server.features.mcp.models", "MCPServerSimpleUpdateRequest"),
    ("onyx.server.features.mcp.models", "MCPUserCredentialsRequest"),
    ("onyx.server.features.mcp.models", "MCPApiKeyResponse"),
    ("onyx.server.features.mcp.models", "MCPUserOAuthConnectRequest"),
    ("onyx.server.features.mcp.models", "MCPUserOAuthConnectResponse"),
    ("onyx.server.features.mcp.models", "MCPOAuthCallbackResponse"),
    ("onyx.server.features.mcp.api", "ServerToolsResponse"),
    # The managers' own models.
    ("tests.integration.common_utils.test_models", "DATestPAT"),
    ("tests.integration.common_utils.test_models", "DATestAPIKey"),
    ("tests.integration.common_utils.test_models", "DATestUser"),
    ("tests.integration.common_utils.test_models", "DATestCredential"),
    ("tests.integration.common_utils.test_models", "DATestConnector"),
    ("tests.integration.common_utils.test_models", "DATestCCPair"),
    ("tests.integration.common_utils.test_models", "DATestUserGroup"),
    ("tests.integration.common_utils.test_models", "DATestTool"),
    ("tests.integration.common_utils.test_models", "DATestLLMProvider"),
]

# Models named by ROOTS' fields that are recorded as opaque: Quarry answers
# [] wherever they appear (a user group's document sets and personas).
OPAQUE = {"DocumentSet", "PersonaSnapshot"}

# Names that are not defined in Onyx's source. fastapi-users' BaseUser is the
# base of UserRead; its fields are those of the fastapi-users release that
# backend/requirements/default.txt pins (checked below).
BUILTINS = {"int", "str", "bool", "float", "Any", "UUID", "datetime", "None", "EmailStr"}
FASTAPI_USERS_VERSION = "15.0.4"
FASTAPI_USERS_BASEUSER = [
    # (name, annotation, default or None when required)
    ("id", "UUID", None),  # models.ID, here uuid.UUID (UserRead's type argument)
    ("email", "EmailStr", None),
    ("is_active", "bool", "True"),
    ("is_superuser", "bool", "False"),
    ("is_verified", "bool", "False"),
]


class Onyx:
    """The parsed modules of one checkout."""

    def __init__(self, root):
        if os.path.isdir(os.path.join(root, "backend")):
            root = os.path.join(root, "backend")
        if not os.path.isdir(os.path.join(root, "onyx")):
            sys.exit(f"{root}: not an Onyx checkout (no onyx/ package)")
        self.root = root
        self.modules = {}

    def path(self, module):
        base = os.path.join(self.root, *module.split("."))
        for p in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(p):
                return p
        return None

    def rel(self, path):
        return os.path.relpath(path, os.path.dirname(self.root))

    def module(self, module):
        if module in self.modules:
            return self.modules[module]
        path = self.path(module)
        m = None
        if path:
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            m = {"path": path, "classes": {}, "imports": {}, "aliases": {}, "typevars": set()}
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    m["classes"][node.name] = node
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for a in node.names:
                        m["imports"][a.asname or a.name] = (node.module, a.name)
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        m["imports"][a.asname or a.name] = (a.name, None)
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name, v = node.targets[0].id, node.value
                    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "TypeVar":
                        m["typevars"].add(name)
                    elif isinstance(v, (ast.Subscript, ast.BinOp)):
                        m["aliases"][name] = v
        self.modules[module] = m
        return m

    def resolve(self, module, name, seen=()):
        """Where name, as module sees it, is defined: ("class", module,
        ClassDef), ("alias", module, expr), ("typevar", module, name) or
        ("external", module, name)."""
        if (module, name) in seen:
            raise ValueError(f"import cycle at {module}.{name}")
        m = self.module(module)
        if m is None:
            return ("external", module, name)
        if name in m["classes"]:
            return ("class", module, m["classes"][name])
        if name in m["aliases"]:
            return ("alias", module, m["aliases"][name])
        if name in m["typevars"]:
            return ("typevar", module, name)
        if name in m["imports"]:
            mod, orig = m["imports"][name]
            if orig is None:
                return ("external", mod, name)
            return self.resolve(mod, orig, seen + ((module, name),))
        return ("external", module, name)


class Table:
    def __init__(self, onyx):
        self.onyx = onyx
        self.models = {}
        self.enums = {}
        self.opaque = {}
        self.where = {}  # class name -> (module) it was recorded from

    def claim(self, name, module):
        if name in self.where and self.where[name] != module:
            sys.exit(f"two classes named {name}: {self.where[name]} and {module}")
        self.where[name] = module

    # --- classes -----------------------------------------------------

    def kind(self, module, cls, seen=()):
        """"model", "enum" or None for a ClassDef."""
        for b in cls.bases:
            base = b.value if isinstance(b, ast.Subscript) else b
            text = ast.unparse(base)
            if text in ("BaseModel", "pydantic.BaseModel"):
                return "model"
            if text in ("Enum", "PyEnum", "enum.Enum", "str"):
                if any(ast.unparse(x) in ("Enum", "PyEnum", "enum.Enum") for x in cls.bases):
                    return "enum"
                continue
            if text == "schemas.BaseUser":
                return "model"
            if isinstance(base, ast.Name):
                r = self.onyx.resolve(module, base.id)
                if r[0] == "external" and r[1] == "pydantic" and r[2] == "BaseModel":
                    return "model"
                if r[0] == "external" and r[1] == "enum":
                    return "enum"
                if r[0] == "class" and (r[1], r[2].name) not in seen:
                    k = self.kind(r[1], r[2], seen + ((r[1], r[2].name),))
                    if k:
                        return k
        return None

    def fields(self, module, cls):
        """The fields of model cls in pydantic's order: a list of
        (name, annotation expr or text, default text or None, module the
        annotation is read in, whether it is excluded from dumps)."""
        out = {}
        for b in cls.bases:
            base = b.value if isinstance(b, ast.Subscript) else b
            text = ast.unparse(base)
            if text == "schemas.BaseUser":
                for name, ann, default in FASTAPI_USERS_BASEUSER:
                    out[name] = (ann, default, None, False)
                continue
            if isinstance(base, ast.Name):
                r = self.onyx.resolve(module, base.id)
                if r[0] == "class" and self.kind(r[1], r[2]) == "model":
                    for name, ann, default, mod, excluded in self.fields(r[1], r[2]):
                        out[name] = (ann, default, mod, excluded)
        for node in cls.body:
            if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
                continue
            if ast.unparse(node.annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            out[node.target.id] = (node.annotation, self.default(node.value), module, self.excluded(node.value))
        return [(name, ann, default, mod, excluded) for name, (ann, default, mod, excluded) in out.items()]

    @staticmethod
    def excluded(value):
        """Whether a field's Field(...) says exclude=True: pydantic leaves it
        out of model_dump, so FastAPI never writes it."""
        return (isinstance(value, ast.Call) and ast.unparse(value.func) in ("Field", "pydantic.Field") and
                any(kw.arg == "exclude" and isinstance(kw.value, ast.Constant) and kw.value.value is True for kw in value.keywords))

    @staticmethod
    def default(value):
        if value is None:
            return None
        if isinstance(value, ast.Call) and ast.unparse(value.func) in ("Field", "pydantic.Field"):
            for kw in value.keywords:
                if kw.arg == "default":
                    return ast.unparse(kw.value)
                if kw.arg == "default_factory":
                    return ast.unparse(kw.value) + "()"
            if value.args and not (isinstance(value.args[0], ast.Constant) and value.args[0].value is Ellipsis):
                return ast.unparse(value.args[0])
            return None
        return ast.unparse(value)

    def add_class(self, module, name):
        r = self.onyx.resolve(module, name)
        if r[0] != "class":
            sys.exit(f"{module}.{name}: not a class in the checkout ({r[0]})")
        _, mod, cls = r
        if cls.name in OPAQUE:
            self.claim(cls.name, mod)
            self.opaque[cls.name] = self.onyx.rel(self.onyx.module(mod)["path"])
            return cls.name
        k = self.kind(mod, cls)
        if k == "enum":
            if cls.name not in self.enums:
                self.claim(cls.name, mod)
                values = []
                for node in cls.body:
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        values.append(node.value.value)
                self.enums[cls.name] = {"file": self.onyx.rel(self.onyx.module(mod)["path"]), "values": values}
            return cls.name
        if k != "model":
            sys.exit(f"{mod}.{cls.name}: neither a pydantic model nor an enumeration")
        if cls.name in self.models:
            return cls.name
        self.claim(cls.name, mod)
        entry = {"file": self.onyx.rel(self.onyx.module(mod)["path"]), "bases": [ast.unparse(b) for b in cls.bases], "fields": []}
        self.models[cls.name] = entry
        params = []
        for b in cls.bases:
            if isinstance(b, ast.Subscript) and ast.unparse(b.value) == "Generic":
                params = [ast.unparse(x) for x in (b.slice.elts if isinstance(b.slice, ast.Tuple) else [b.slice])]
        if params:
            entry["type_params"] = params
        for fname, ann, default, amod, excluded in self.fields(mod, cls):
            if isinstance(ann, str):  # a field of fastapi-users' BaseUser
                text, tree = ann, {"name": ann}
            else:
                text, tree = ast.unparse(ann), self.tree(amod, ann)
            field = {"name": fname, "type": text, "tree": tree, "required": default is None, "default": default}
            if excluded:
                field["excluded"] = True
            entry["fields"].append(field)
        return cls.name

    # --- annotations -------------------------------------------------

    def tree(self, module, expr):
        if isinstance(expr, ast.Constant) and expr.value is None:
            return {"name": "None"}
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return self.tree(module, ast.parse(expr.value, mode="eval").body)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return self.union([self.tree(module, expr.left), self.tree(module, expr.right)])
        if isinstance(expr, ast.Subscript):
            head = ast.unparse(expr.value)
            args = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            if head in ("Optional", "typing.Optional"):
                return self.union([self.tree(module, args[0]), {"name": "None"}])
            if head in ("Union", "typing.Union"):
                return self.union([self.tree(module, a) for a in args])
            if head in ("list", "List", "Sequence", "typing.List", "typing.Sequence"):
                return {"list": self.tree(module, args[0])}
            if head in ("dict", "Dict", "typing.Dict"):
                return {"dict": [self.tree(module, args[0]), self.tree(module, args[1])]}
            sys.exit(f"{module}: unsupported annotation {ast.unparse(expr)}")
        name = ast.unparse(expr)
        if name in ("uuid.UUID", "UUID"):
            return {"name": "UUID"}
        if name in ("datetime", "datetime.datetime"):
            return {"name": "datetime"}
        if name in BUILTINS:
            return {"name": name}
        if name in ("dict", "list"):
            return {name: {"name": "Any"}} if name == "list" else {"dict": [{"name": "Any"}, {"name": "Any"}]}
        if not isinstance(expr, ast.Name):
            sys.exit(f"{module}: unsupported annotation {name}")
        r = self.onyx.resolve(module, name)
        if r[0] == "alias":
            return self.tree(r[1], r[2])
        if r[0] == "typevar":
            return {"typevar": name}
        if r[0] == "external":
            sys.exit(f"{module}: {name} is defined outside the checkout ({r[1]})")
        return {"name": self.add_class(module, name)}

    @staticmethod
    def union(parts):
        out = []
        for p in parts:
            out.extend(p["union"] if "union" in p else [p])
        return {"union": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", help="an Onyx checkout (repository root or backend/)")
    ap.add_argument("--version", default="v4.6.1", help="the tag the checkout is at (recorded in the table)")
    args = ap.parse_args()
    onyx = Onyx(args.checkout)
    req = os.path.join(onyx.root, "requirements", "default.txt")
    if os.path.isfile(req):
        m = re.search(r"^fastapi-users==([\w.]+)", open(req, encoding="utf-8").read(), re.M)
        if not m or m.group(1) != FASTAPI_USERS_VERSION:
            sys.exit(f"{req}: fastapi-users is not {FASTAPI_USERS_VERSION}; update FASTAPI_USERS_BASEUSER")
    table = Table(onyx)
    for module, name in ROOTS:
        table.add_class(module, name)
    out = {
        "onyx": args.version,
        "generated_by": "scripts/onyx_models.py",
        "fastapi_users": FASTAPI_USERS_VERSION,
        "models": dict(sorted(table.models.items())),
        "enums": dict(sorted(table.enums.items())),
        "opaque": dict(sorted(table.opaque.items())),
    }
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
