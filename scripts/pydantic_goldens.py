#!/usr/bin/env python3
"""Generate the golden files that pin package decode to FastAPI + pydantic 2.

Each request model of api/models.go is mirrored below as a pydantic 2 model,
and FastAPI's request handling (fastapi/routing.py get_request_handler and
fastapi/dependencies/utils.py request_params_to_args/request_body_to_args,
with errors as exc.errors(include_url=False) rendered by jsonable_encoder)
is reproduced without FastAPI itself. A corpus of bad and odd requests is
run through it and written to api/testdata/goldens/:

  requests_<model>.json  one file per model: the requests and FastAPI's answers
  json_errors.json       json.loads messages/positions, or Python's rendering
  scalars.json           lax validation of single int/bool/str/datetime values

Run it with the pyenv python3 (pydantic 2.13):  python3 scripts/pydantic_goldens.py
Go tests read the generated files and never need Python.
"""

import base64
import dataclasses
import email.message
import enum
import json
import os
import re
import sys
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Optional

import pydantic
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, model_validator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "api", "testdata", "goldens")

# Go's int64 fields are ints bounded to the int64 range (a deliberate choice
# of the Python mirror: plain int would accept any size).
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


def go_enum(type_name, source="enums.go"):
    """Read the values of a quarry enumeration from enums.go (or source)."""
    src = open(os.path.join(ROOT, source)).read()
    m = re.search(r"func \(%s\) EnumValues\(\) \[\]string \{\s*return (\w+|\[\]string\{[^}]*\})" % type_name, src)
    body = m.group(1)
    if not body.startswith("[]string"):
        body = re.search(r"var %s = \[\]string\{([^}]*)\}" % body, src).group(1)
    return re.findall(r'"([^"]*)"', body)


DocumentSource = enum.Enum("DocumentSource", {v: v for v in go_enum("DocumentSource")}, type=str)
AccessType = enum.Enum("AccessType", {v: v for v in go_enum("AccessType")}, type=str)
InputType = enum.Enum("InputType", {v: v for v in go_enum("InputType")}, type=str)
Role = enum.Enum("Role", {v: v for v in go_enum("Role")}, type=str)
CCPairStatus = enum.Enum("CCPairStatus", {v: v for v in go_enum("CCPairStatus")}, type=str)
CCPairStatusChange = enum.Enum("CCPairStatusChange", {v: v for v in go_enum("CCPairStatusChange")}, type=str)
MCPTransport = enum.Enum("MCPTransport", {v: v for v in go_enum("MCPTransport", "mcp.go")}, type=str)
MCPAuthType = enum.Enum("MCPAuthType", {v: v for v in go_enum("MCPAuthType", "mcp.go")}, type=str)
MCPPerformer = enum.Enum("MCPPerformer", {v: v for v in go_enum("MCPPerformer", "mcp.go")}, type=str)
MCPProviderMode = enum.Enum("MCPProviderMode", {v: v for v in go_enum("MCPProviderMode", "mcp.go")}, type=str)
MCPServerStatus = enum.Enum("MCPServerStatus", {v: v for v in go_enum("MCPServerStatus", "mcp.go")}, type=str)
ToolSnapshotSource = enum.Enum("ToolSnapshotSource", {"db": "db", "mcp": "mcp"}, type=str)


def go_permissions():
    """Read the values of quarry.Permission, in their order, from permission.go."""
    src = open(os.path.join(ROOT, "permission.go")).read()
    return re.findall(r'^\s*Perm\w+\s+Permission = "([^"]+)"', src, re.M)


Permission = enum.Enum("Permission", {v: v for v in go_permissions()}, type=str)


class Header(BaseModel):
    key: str
    value: str


class CredentialPatch(BaseModel):
    credential_json: Optional[dict[str, Any]] = None
    admin_public: Optional[bool] = None
    name: Optional[str] = None
    curator_public: Optional[bool] = None
    groups: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    source: Optional[DocumentSource] = None


class CredentialCreate(BaseModel):
    credential_json: dict[str, Any]
    admin_public: bool
    source: DocumentSource
    name: Optional[str] = None
    curator_public: bool = False
    groups: Annotated[list[Int64], Field(max_length=1000)] = []


class ToolUpdate(BaseModel):
    name: Optional[str] = None
    description: Optional[str] = None
    definition: Optional[dict[str, Any]] = None
    custom_headers: Optional[Annotated[list[Header], Field(max_length=100)]] = None
    passthrough_auth: Optional[bool] = None
    oauth_config_id: Optional[Int64] = None


class ToolCreate(BaseModel):
    name: str
    description: Optional[str] = None
    definition: dict[str, Any]
    custom_headers: Optional[Annotated[list[Header], Field(max_length=100)]] = None
    passthrough_auth: bool = False
    oauth_config_id: Optional[Int64] = None


class ToolStatusUpdate(BaseModel):
    tool_ids: Annotated[list[Int64], Field(max_length=1000)]
    enabled: bool


class CredentialDataUpdate(BaseModel):
    name: str
    credential_json: dict[str, Any]


class ToolValidate(BaseModel):
    definition: dict[str, Any]


class ConnectorInput(BaseModel):
    name: str
    source: DocumentSource
    input_type: InputType
    connector_specific_config: dict[str, Any]
    refresh_freq: Optional[Int64] = None
    prune_freq: Optional[Int64] = None
    indexing_start: Optional[datetime] = None
    access_type: Optional[AccessType] = None
    groups: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None


class CCPairCreate(BaseModel):
    name: str
    access_type: AccessType
    groups: Annotated[list[Int64], Field(max_length=1000)] = []


class CCPairStatusUpdate(BaseModel):
    status: CCPairStatusChange


class CCPairRename(BaseModel):
    new_name: str


class CCPairIdentifier(BaseModel):
    connector_id: Int64
    credential_id: Int64


class FederatedConnectorConfig(BaseModel):
    federated_connector_id: Int64
    entities: dict[str, Any]


# Onyx's DocumentSetCreationRequest, with Quarry's bounds on its lists.
class DocumentSetCreationRequest(BaseModel):
    name: str
    description: str
    cc_pair_ids: Annotated[list[Int64], Field(max_length=10000)]
    is_public: bool
    users: Annotated[list[uuid.UUID], Field(max_length=10000)] = []
    groups: Annotated[list[Int64], Field(max_length=1000)] = []
    federated_connectors: Annotated[list[FederatedConnectorConfig], Field(max_length=100)] = []


# Onyx's DocumentSetUpdateRequest, with Quarry's bounds on its lists.
class DocumentSetUpdateRequest(BaseModel):
    id: Int64
    name: str
    description: str
    cc_pair_ids: Annotated[list[Int64], Field(max_length=10000)]
    is_public: bool
    users: Annotated[list[uuid.UUID], Field(max_length=10000)]
    groups: Annotated[list[Int64], Field(max_length=1000)]
    federated_connectors: Annotated[list[FederatedConnectorConfig], Field(max_length=100)] = []


class DocumentSetsQuery(BaseModel):
    get_editable: bool = False


class CheckDocSetPublicRequest(BaseModel):
    document_set_ids: Annotated[list[Int64], Field(max_length=1000)]


class AddUsers(BaseModel):
    user_ids: Annotated[list[str], Field(max_length=10000)]


class UserGroupCreate(BaseModel):
    name: str
    user_ids: Annotated[list[str], Field(max_length=10000)] = []
    cc_pair_ids: Annotated[list[Int64], Field(max_length=10000)] = []


class UserGroupUpdate(BaseModel):
    name: Optional[str] = None
    user_ids: Optional[Annotated[list[str], Field(max_length=10000)]] = None
    cc_pair_ids: Optional[Annotated[list[Int64], Field(max_length=10000)]] = None


class SetCurator(BaseModel):
    user_id: str
    is_curator: bool


class APIKeyCreate(BaseModel):
    name: Optional[str] = None
    role: Role = Role.basic


class OAuthConfigCreate(BaseModel):
    name: str
    authorization_url: str
    token_url: str
    client_id: str
    client_secret: str
    scopes: Optional[Annotated[list[str], Field(max_length=100)]] = None
    additional_params: Optional[dict[str, Any]] = None


class OAuthConfigUpdate(BaseModel):
    name: Optional[str] = None
    authorization_url: Optional[str] = None
    token_url: Optional[str] = None
    client_id: Optional[str] = None
    client_secret: Optional[str] = None
    scopes: Optional[Annotated[list[str], Field(max_length=100)]] = None
    additional_params: Optional[dict[str, Any]] = None
    clear_client_id: bool = False
    clear_client_secret: bool = False


class OAuthInitiate(BaseModel):
    oauth_config_id: Int64
    return_path: str = "/"


class OAuthCallbackQuery(BaseModel):
    code: str
    state: str


class ToolRun(BaseModel):
    method: Optional[str] = None
    args: dict[str, Any] = {}


# Onyx's MCP request models (onyx/server/features/mcp/models.py at
# v4.6.1), without their model validators (Quarry checks those rules as
# 400s) and with users as strings rather than UUIDs.
class CreateTokenRequest(BaseModel):
    name: str = Field(..., min_length=1, max_length=100)
    expiration_days: Optional[Annotated[Int64, Field(ge=1)]] = None
    scopes: Optional[Annotated[list[Permission], Field(max_length=100)]] = None


class ModelConfigurationUpsertRequest(BaseModel):
    name: str
    is_visible: bool
    max_input_tokens: Optional[Int64] = None
    supports_image_input: Optional[bool] = None
    supports_reasoning: Optional[bool] = None
    display_name: Optional[str] = None
    custom_display_name: Optional[str] = None


# Onyx's LLMProviderUpsertRequest. Onyx's normalize_provider (a "before"
# validator: value.strip().lower()) fails with a 500 when provider is not a
# string; the mirror leaves it out, so such a body is pydantic's
# string_type 422, and Quarry normalizes the string after decoding.
class LLMProviderUpsertRequest(BaseModel):
    name: Optional[str] = None
    provider: str
    api_key: Optional[str] = None
    api_base: Optional[str] = None
    api_version: Optional[str] = None
    custom_config: Optional[dict[str, str]] = None
    is_public: bool = True
    is_auto_mode: bool = False
    groups: Annotated[list[Int64], Field(max_length=1000)] = []
    personas: Annotated[list[Int64], Field(max_length=1000)] = []
    deployment_name: Optional[str] = None
    id: Optional[Int64] = None
    api_key_changed: bool = False
    custom_config_changed: bool = False
    model_configurations: Annotated[list[ModelConfigurationUpsertRequest], Field(max_length=1000)] = []


class PutLLMProviderQuery(BaseModel):
    is_creation: bool = False


class LLMProvidersQuery(BaseModel):
    include_image_gen: bool = False


class DeleteLLMProviderQuery(BaseModel):
    force: bool = False


class DefaultModel(BaseModel):
    provider_id: Int64
    model_name: str


class TestLLMRequest(BaseModel):
    id: Optional[Int64] = None
    provider: str
    model: str
    api_key: Optional[str] = None
    api_base: Optional[str] = None
    api_version: Optional[str] = None
    custom_config: Optional[dict[str, str]] = None
    deployment_name: Optional[str] = None
    api_key_changed: bool
    custom_config_changed: bool


class MCPAuthTemplate(BaseModel):
    headers: dict[str, str] = {}
    required_fields: Annotated[list[str], Field(max_length=100)] = []


class MCPToolCreateRequest(BaseModel):
    name: str
    description: Optional[str] = None
    server_url: str
    auth_type: MCPAuthType
    auth_performer: MCPPerformer
    api_token: Optional[str] = None
    api_token_changed: bool = False
    oauth_client_id: Optional[str] = None
    oauth_client_secret: Optional[str] = None
    oauth_provider_mode: MCPProviderMode = MCPProviderMode("AUTO_DISCOVERY")
    oauth_authorization_endpoint: Optional[str] = None
    oauth_token_endpoint: Optional[str] = None
    oauth_scopes_override: Optional[Annotated[list[str], Field(max_length=100)]] = None
    oauth_additional_auth_params: Optional[dict[str, str]] = None
    oauth_client_id_changed: bool = False
    oauth_client_secret_changed: bool = False
    transport: Optional[MCPTransport] = None
    auth_template: Optional[MCPAuthTemplate] = None
    auth_template_headers_changed: dict[str, bool] = {}
    admin_credentials: Optional[dict[str, str]] = None
    admin_credentials_changed: dict[str, bool] = {}
    existing_server_id: Optional[Int64] = None
    is_public: Optional[bool] = None
    groups: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    users: Optional[Annotated[list[str], Field(max_length=10000)]] = None


class MCPToolUpdateRequest(BaseModel):
    server_id: Int64
    name: Optional[str] = None
    description: Optional[str] = None
    selected_tools: Optional[Annotated[list[str], Field(max_length=1000)]] = None


class MCPServerSimpleCreateRequest(BaseModel):
    name: str
    description: Optional[str] = None
    server_url: str
    is_public: bool = True
    groups: Annotated[list[Int64], Field(max_length=1000)] = []
    users: Annotated[list[str], Field(max_length=10000)] = []


class MCPServerSimpleUpdateRequest(BaseModel):
    name: Optional[str] = None
    description: Optional[str] = None
    server_url: Optional[str] = None
    tool_policies: Optional[dict[str, Any]] = None
    is_public: Optional[bool] = None
    groups: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    users: Optional[Annotated[list[str], Field(max_length=10000)]] = None
    available_in_craft: Optional[bool] = None


class MCPUserOAuthConnectRequest(BaseModel):
    server_id: Int64
    return_path: str
    include_resource_param: bool
    force_reauthentication: bool = False
    oauth_client_id: Optional[str] = None
    oauth_client_secret: Optional[str] = None
    oauth_client_id_changed: bool = False
    oauth_client_secret_changed: bool = False


class MCPOAuthCallbackQuery(BaseModel):
    code: Optional[str] = None
    state: Optional[str] = None


class MCPUserCredentialsRequest(BaseModel):
    server_id: Int64
    credentials: dict[str, str]
    transport: str


class MCPStatusQuery(BaseModel):
    status: MCPServerStatus


class MCPSnapshotsQuery(BaseModel):
    source: ToolSnapshotSource = ToolSnapshotSource("db")


class StatusQuery(BaseModel):
    source: Annotated[list[DocumentSource], Field(max_length=100)] = []
    access_type: Annotated[list[AccessType], Field(max_length=100)] = []


class AuditQuery(BaseModel):
    resource_type: Optional[str] = None
    resource_id: Optional[str] = None
    actor: Optional[str] = None
    action: Optional[str] = None
    since: Optional[datetime] = None
    until: Optional[datetime] = None
    before_id: Optional[Annotated[Int64, Field(ge=1)]] = None
    offset: Annotated[int, Field(ge=0, le=1000000)] = 0
    limit: Annotated[int, Field(ge=1, le=1000)] = 100


class RegisterRequest(BaseModel):
    email: str
    password: str
    name: Optional[str] = None
    invitation_token: Optional[str] = None


class LoginForm(BaseModel):
    """FastAPI's OAuth2PasswordRequestForm: each field is a Form parameter,
    validated on its own (see handle_form)."""
    grant_type: Annotated[Optional[str], Field(pattern="^password$")] = None
    username: str
    password: str
    scope: str = ""
    client_id: Optional[str] = None
    client_secret: Optional[str] = None


class SetUserRole(BaseModel):
    user_email: str
    new_role: Role
    explicit_override: bool = False


class UserEmail(BaseModel):
    user_email: str


class ChangePassword(BaseModel):
    current_password: str
    new_password: str


class InviteUsers(BaseModel):
    emails: Annotated[list[str], Field(max_length=1000)]


UserStatus = enum.Enum("UserStatus", {v: v for v in ["live", "invited", "deactivated"]}, type=str)


class UsersQuery(BaseModel):
    q: Optional[str] = None
    page_num: Annotated[int, Field(ge=0, le=1000000)] = 0
    page: Optional[Annotated[int, Field(ge=1, le=1000000)]] = None
    page_size: Annotated[int, Field(ge=1, le=1000)] = 10
    roles: Annotated[list[Role], Field(max_length=100)] = []
    is_active: Optional[bool] = None
    status: Optional[UserStatus] = None


class SessionsQuery(BaseModel):
    user_email: Optional[str] = None


class SetPermission(BaseModel):
    permission: Permission
    enabled: bool


IndexingStatus = enum.Enum("IndexingStatus", {v: v for v in [
    "not_started", "in_progress", "success", "canceled", "interrupted", "failed", "completed_with_errors"]}, type=str)
DocsCountOperator = enum.Enum("DocsCountOperator", {"GREATER_THAN": ">", "LESS_THAN": "<", "EQUAL_TO": "="}, type=str)


class IndexingStatusRequest(BaseModel):
    secondary_index: bool = False
    source: Optional[DocumentSource] = None
    access_type_filters: Annotated[list[AccessType], Field(max_length=100)] = []
    last_status_filters: Annotated[list[IndexingStatus], Field(max_length=100)] = []
    docs_count_operator: Optional[DocsCountOperator] = None
    docs_count_value: Optional[Int64] = None
    name_filter: Optional[str] = None
    source_to_page: dict[DocumentSource, Int64] = {}
    get_all_connectors: bool = False


class RunConnectorRequest(BaseModel):
    connector_id: Int64
    credential_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    from_beginning: bool = False


class IndexAttemptsQuery(BaseModel):
    page_num: Annotated[int, Field(ge=0, le=1000000)] = 0
    page_size: Annotated[int, Field(ge=1, le=1000)] = 10


class PairDocumentsQuery(BaseModel):
    page_num: Annotated[int, Field(ge=0, le=1000000)] = 0
    page_size: Annotated[int, Field(ge=1, le=1000)] = 10


class AttemptErrorsQuery(BaseModel):
    include_resolved: bool = False
    page_num: Annotated[int, Field(ge=0, le=1000000)] = 0
    page_size: Annotated[int, Field(ge=1, le=100)] = 10


class WorkerRegister(BaseModel):
    name: str


class WorkerRegistrationCreate(BaseModel):
    name: str
    hours: Optional[Annotated[int, Field(ge=1, le=720)]] = None


class WorkerHeartbeat(BaseModel):
    attempt_ids: Annotated[list[Int64], Field(max_length=128)] = []


WorkerStopReason = enum.Enum("WorkerStopReason", {v: v for v in go_enum("WorkerStopReason", "indexretry.go")}, type=str)


class AttemptFinish(BaseModel):
    status: IndexingStatus
    error_msg: Optional[str] = None
    full_exception_trace: Optional[str] = None
    reason: Optional[WorkerStopReason] = None


class AttemptProgress(BaseModel):
    documents: Annotated[list[dict[str, Any]], Field(max_length=1000)] = []
    failures: Annotated[list[dict[str, Any]], Field(max_length=1000)] = []
    checkpoint: Optional[dict[str, Any]] = None
    document_ids: Annotated[list[str], Field(max_length=1000)] = []
    access: Annotated[list[dict[str, Any]], Field(max_length=1000)] = []
    groups: Annotated[list[dict[str, Any]], Field(max_length=1000)] = []


class AttemptCredential(BaseModel):
    credential_json: dict[str, Any]
    version: Int64


@dataclasses.dataclass(frozen=True)
class ExternalAccess:
    # Onyx's ExternalAccess (onyx/access/models.py): a dataclass of sets.
    external_user_emails: Annotated[set[str], Field(max_length=10000)]
    external_user_group_ids: Annotated[set[str], Field(max_length=10000)]
    is_public: bool


class DocumentBase(BaseModel):
    # Onyx's DocumentBase, as Quarry reads it: sections as objects (text
    # sections are checked by the handler), metadata as an object (its
    # values are made strings), the fields Quarry does not keep left out
    # (accepted and ignored, as unknown fields are).
    id: Optional[str] = None
    sections: Annotated[list[dict[str, Any]], Field(max_length=10000)]
    source: Optional[DocumentSource] = None
    semantic_identifier: str
    metadata: dict[str, Any]
    doc_updated_at: Optional[datetime] = None
    doc_created_at: Optional[datetime] = None
    primary_owners: Optional[Annotated[list[dict[str, Any]], Field(max_length=1000)]] = None
    secondary_owners: Optional[Annotated[list[dict[str, Any]], Field(max_length=1000)]] = None
    title: Optional[str] = None
    from_ingestion_api: bool = False
    external_access: Optional[ExternalAccess] = None


class IngestionDocument(BaseModel):
    document: DocumentBase
    cc_pair_id: Optional[Int64] = None


class TimeRange(BaseModel):
    start: Optional[datetime] = None
    end: Optional[datetime] = None


class Tag(BaseModel):
    tag_key: str
    tag_value: str


class BaseFilters(BaseModel):
    source_type: Optional[Annotated[list[DocumentSource], Field(max_length=100)]] = None
    document_set: Optional[Annotated[list[str], Field(max_length=100)]] = None
    created_at_range: Optional[TimeRange] = None
    updated_at_range: Optional[TimeRange] = None
    tags: Optional[Annotated[list[Tag], Field(max_length=100)]] = None
    time_cutoff: Optional[datetime] = None


class SendSearchQueryRequest(BaseModel):
    search_query: str
    filters: Optional[BaseFilters] = None
    num_docs_fed_to_llm_selection: Optional[Int64] = None
    run_query_expansion: bool = False
    num_hits: Int64 = 30
    hybrid_alpha: Optional[float] = None
    include_content: bool = False
    stream: bool = False


MessageType = enum.Enum("MessageType", {v: v for v in go_enum("messageType", "api/models.go")}, type=str)


class ChatMinimalTextMessage(BaseModel):
    message: str
    message_type: MessageType


class SearchRequest(BaseModel):
    """Onyx v4.6.1's SearchRequest (backend/onyx/server/features/search/models.py)."""
    query: str = Field(..., min_length=1, max_length=2048)
    sources: Optional[list[DocumentSource]] = None
    document_sets: Optional[list[str]] = None
    tags: Optional[list[Tag]] = None
    time_cutoff: Optional[datetime] = None
    persona_id: Optional[Int64] = None
    provider: Optional[str] = None
    model: Optional[str] = None
    skip_query_expansion: bool = False
    message_history: Optional[list[ChatMinimalTextMessage]] = None

    @model_validator(mode="after")
    def validate_provider_model_pair(self):
        if self.model and not self.provider:
            raise ValueError("provider is required when model is specified")
        if self.provider and not self.model:
            raise ValueError("model is required when provider is specified")
        return self


class GroupsQuery(BaseModel):
    include_default: bool = False


class UploadFilesQuery(BaseModel):
    # upload_files_api's query parameter; its multipart files are read by
    # the handler (api/file.go), not by this mirror.
    unzip: bool = True


class ConnectorsQuery(BaseModel):
    credential: Optional[Int64] = None


Page = Annotated[int, Field(ge=0, le=1000000)]


class AllUsersQuery(BaseModel):
    q: Optional[str] = None
    accepted_page: Optional[Page] = None
    slack_users_page: Optional[Page] = None
    invited_page: Optional[Page] = None
    include_api_keys: bool = False


class ScimTokenCreate(BaseModel):
    name: str


# Onyx v4.6.1's chat (backend/onyx/server/query_and_chat/models.py,
# backend/onyx/llm/override_models.py,
# backend/onyx/server/features/default_assistant/models.py).
ChatSessionSharedStatus = enum.Enum("ChatSessionSharedStatus", {"public": "public", "private": "private"}, type=str)
MessageOrigin = enum.Enum("MessageOrigin", {v: v for v in go_enum("messageOrigin", "api/models.go")}, type=str)


class ChatSessionCreationRequest(BaseModel):
    persona_id: Int64 = 0
    description: Optional[str] = None
    project_id: Optional[Int64] = None
    incognito: bool = False
    incognito_session_id: Optional[uuid.UUID] = None


class LLMOverride(BaseModel):
    model_configuration_id: Optional[Int64] = None
    model_provider: Optional[str] = None
    model_version: Optional[str] = None
    temperature: Optional[float] = None
    display_name: Optional[str] = None


# file_descriptors' FileDescriptor is a TypedDict; the mirror takes any
# object (Quarry refuses attached files with a 400 after decoding).
class SendMessageRequest(BaseModel):
    message: str
    llm_override: Optional[LLMOverride] = None
    llm_overrides: Optional[Annotated[list[LLMOverride], Field(max_length=100)]] = None
    mock_llm_response: Optional[str] = None
    allowed_tool_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    forced_tool_id: Optional[Int64] = None
    file_descriptors: Annotated[list[dict[str, Any]], Field(max_length=100)] = []
    internal_search_filters: Optional["BaseFilters"] = None
    deep_research: bool = False
    mcp_headers: Optional[dict[str, str]] = None
    origin: MessageOrigin = MessageOrigin.unset
    # Onyx's default is -1 (AUTO_PLACE_AFTER_LATEST_MESSAGE); Quarry tells an
    # absent parent_message_id from a null one after decoding
    # (sendMessage.parent), so the mirror's default is None: the same
    # validation, the same answers.
    parent_message_id: Optional[Int64] = None
    chat_session_id: Optional[uuid.UUID] = None
    chat_session_info: Optional[ChatSessionCreationRequest] = None
    stream: bool = True
    include_citations: bool = True
    additional_context: Optional[str] = None

    @model_validator(mode="after")
    def check_chat_session_id_or_info(self):
        if self.chat_session_id is not None and self.chat_session_info is not None:
            raise ValueError("Only one of chat_session_id or chat_session_info should be provided, not both.")
        return self


class ChatSessionsQuery(BaseModel):
    project_id: Optional[Int64] = None
    only_non_project_chats: bool = True
    include_failed_chats: bool = False
    page_size: Annotated[Int64, Field(ge=1, le=100)] = 50
    before: Optional[str] = None


class GetChatSessionQuery(BaseModel):
    is_shared: bool = False
    include_deleted: bool = False


class DeleteChatSessionQuery(BaseModel):
    hard_delete: Optional[bool] = None


class ChatRenameRequest(BaseModel):
    chat_session_id: uuid.UUID
    name: Optional[str] = None


class ChatSessionUpdateRequest(BaseModel):
    sharing_status: ChatSessionSharedStatus


class ChatFeedbackRequest(BaseModel):
    chat_message_id: Int64
    is_positive: Optional[bool] = None
    feedback_text: Optional[str] = None
    predefined_feedback: Optional[str] = None

    @model_validator(mode="after")
    def check_is_positive_or_feedback_text(self):
        if self.is_positive is None and self.feedback_text is None:
            raise ValueError("Empty feedback received.")
        return self


class RemoveChatFeedbackQuery(BaseModel):
    chat_message_id: Int64


class DefaultAssistantUpdateRequest(BaseModel):
    tool_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    system_prompt: Optional[str] = None


# Onyx's PersonaSharePermission (persona.go's PersonaPermission).
PersonaSharePermission = enum.Enum("PersonaSharePermission", {"EDITOR": "EDITOR", "VIEWER": "VIEWER"}, type=str)


class StarterMessage(BaseModel):
    name: str
    message: str


# Onyx's PersonaUpsertRequest, with Quarry's bounds on its lists.
class PersonaUpsertRequest(BaseModel):
    name: str
    description: str
    document_set_ids: Annotated[list[Int64], Field(max_length=1000)]
    is_public: Optional[bool] = None
    default_model_configuration_id: Optional[Int64] = None
    starter_messages: Optional[Annotated[list[StarterMessage], Field(max_length=100)]] = None
    users: Optional[Annotated[list[uuid.UUID], Field(max_length=10000)]] = None
    groups: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    tool_ids: Annotated[list[Int64], Field(max_length=1000)]
    remove_image: Optional[bool] = None
    uploaded_image_id: Optional[str] = None
    icon_name: Optional[str] = None
    search_start_date: Optional[datetime] = None
    label_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    is_featured: Optional[bool] = None
    display_priority: Optional[Int64] = None
    user_file_ids: Optional[Annotated[list[str], Field(max_length=1000)]] = None
    hierarchy_node_ids: Annotated[list[Int64], Field(max_length=1000)] = []
    document_ids: Annotated[list[str], Field(max_length=1000)] = []
    system_prompt: str
    replace_base_system_prompt: bool = False
    task_prompt: str
    datetime_aware: bool


# Onyx's persona_ids defaults to None; an absent list lists every
# assistant there as here, so the mirror's default is Quarry's empty list.
class PersonasQuery(BaseModel):
    include_deleted: bool = False
    persona_ids: list[Int64] = []


class AdminPersonasQuery(BaseModel):
    include_deleted: bool = False
    get_editable: bool = False


# The query of Onyx's paginated listings, /agents and /admin/agents.
class AgentsQuery(BaseModel):
    page_num: Annotated[Int64, Field(ge=0)] = 0
    page_size: Annotated[Int64, Field(ge=1, le=1000)] = 10
    include_deleted: bool = False
    get_editable: bool = False
    include_default: bool = True


class IsListedRequest(BaseModel):
    is_listed: bool


class IsPublicRequest(BaseModel):
    is_public: bool


class IsFeaturedRequest(BaseModel):
    is_featured: bool


class DisplayPriorityRequest(BaseModel):
    display_priority_map: dict[Int64, Int64]


class PersonaLabelCreate(BaseModel):
    name: str


class PersonaLabelPatchRequest(BaseModel):
    label_name: str


class PersonaUserShareRequest(BaseModel):
    user_id: uuid.UUID
    permission: PersonaSharePermission


class PersonaGroupShareRequest(BaseModel):
    group_id: Int64
    permission: PersonaSharePermission


# Onyx's PersonaShareRequest, with Quarry's bounds on its lists.
class PersonaShareRequest(BaseModel):
    user_ids: Optional[Annotated[list[uuid.UUID], Field(max_length=10000)]] = None
    group_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None
    user_shares: Optional[Annotated[list[PersonaUserShareRequest], Field(max_length=10000)]] = None
    group_shares: Optional[Annotated[list[PersonaGroupShareRequest], Field(max_length=1000)]] = None
    is_public: Optional[bool] = None
    public_permission: Optional[PersonaSharePermission] = None
    label_ids: Optional[Annotated[list[Int64], Field(max_length=1000)]] = None

    @model_validator(mode="after")
    def _reject_legacy_and_leveled(self):
        if self.user_ids is not None and self.user_shares is not None:
            raise ValueError("Provide either user_ids or user_shares, not both")
        if self.group_ids is not None and self.group_shares is not None:
            raise ValueError("Provide either group_ids or group_shares, not both")
        return self


class TransferPersonaOwnershipRequest(BaseModel):
    new_owner_user_id: Optional[uuid.UUID] = None
    new_owner_group_id: Optional[Int64] = None


# Each endpoint: the Go model name, the method and path, its path
# parameters, its query model and its body model.
ENDPOINTS = {
    "credentialPatch": ("PATCH", "/manage/credential/{credential_id}", ["credential_id"], None, CredentialPatch),
    "credentialCreate": ("POST", "/manage/credential", [], None, CredentialCreate),
    "toolUpdate": ("PUT", "/admin/tool/custom/{tool_id}", ["tool_id"], None, ToolUpdate),
    "toolCreate": ("POST", "/admin/tool/custom", [], None, ToolCreate),
    "toolValidate": ("POST", "/admin/tool/custom/validate", [], None, ToolValidate),
    "toolStatusUpdate": ("PATCH", "/admin/tool/status", [], None, ToolStatusUpdate),
    "credentialDataUpdate": ("PUT", "/manage/admin/credential/{credential_id}", ["credential_id"], None,
                             CredentialDataUpdate),
    "ccPairStatusUpdate": ("PUT", "/manage/admin/cc-pair/{cc_pair_id}/status", ["cc_pair_id"], None,
                           CCPairStatusUpdate),
    "ccPairRename": ("PUT", "/manage/admin/cc-pair/{cc_pair_id}/name", ["cc_pair_id"], CCPairRename, None),
    "ccPairIdentifier": ("POST", "/manage/admin/deletion-attempt", [], None, CCPairIdentifier),
    "addUsers": ("POST", "/manage/admin/user-group/{group_id}/add-users", ["group_id"], None, AddUsers),
    "connectorInput": ("PATCH", "/manage/admin/connector/{connector_id}", ["connector_id"], None, ConnectorInput),
    "ccPairCreate": ("PUT", "/manage/connector/{connector_id}/credential/{credential_id}",
                     ["connector_id", "credential_id"], None, CCPairCreate),
    "userGroupCreate": ("POST", "/manage/admin/user-group", [], None, UserGroupCreate),
    "documentSetCreate": ("POST", "/manage/admin/document-set", [], None, DocumentSetCreationRequest),
    "documentSetUpdate": ("PATCH", "/manage/admin/document-set", [], None, DocumentSetUpdateRequest),
    "documentSetDelete": ("DELETE", "/manage/admin/document-set/{document_set_id}", ["document_set_id"], None, None),
    "documentSetsQuery": ("GET", "/manage/document-set", [], DocumentSetsQuery, None),
    "documentSetPublic": ("GET", "/manage/document-set-public", [], None, CheckDocSetPublicRequest),
    "userGroupUpdate": ("PATCH", "/manage/admin/user-group/{group_id}", ["group_id"], None, UserGroupUpdate),
    "setCurator": ("POST", "/manage/admin/user-group/{group_id}/set-curator", ["group_id"], None, SetCurator),
    "apiKeyCreate": ("POST", "/admin/api-key", [], None, APIKeyCreate),
    "oauthConfigCreate": ("POST", "/admin/oauth-config", [], None, OAuthConfigCreate),
    "oauthConfigUpdate": ("PUT", "/admin/oauth-config/{oauth_config_id}", ["oauth_config_id"], None, OAuthConfigUpdate),
    "oauthInitiate": ("POST", "/oauth-config/initiate", [], None, OAuthInitiate),
    "oauthCallbackQuery": ("POST", "/oauth-config/callback", [], OAuthCallbackQuery, None),
    "toolRun": ("POST", "/tool/{tool_id}/run", ["tool_id"], None, ToolRun),
    "patCreate": ("POST", "/user/pats", [], None, CreateTokenRequest),
    "llmProviderUpsert": ("PUT", "/admin/llm/provider", [], PutLLMProviderQuery, LLMProviderUpsertRequest),
    "llmProvidersQuery": ("GET", "/admin/llm/provider", [], LLMProvidersQuery, None),
    "llmProviderDelete": ("DELETE", "/admin/llm/provider/{provider_id}", ["provider_id"], DeleteLLMProviderQuery, None),
    "defaultModel": ("POST", "/admin/llm/default", [], None, DefaultModel),
    "testLLM": ("POST", "/admin/llm/test", [], None, TestLLMRequest),
    "chatSessionCreate": ("POST", "/chat/create-chat-session", [], None, ChatSessionCreationRequest),
    "sendMessage": ("POST", "/chat/send-chat-message", [], None, SendMessageRequest),
    "chatSessionsQuery": ("GET", "/chat/get-user-chat-sessions", [], ChatSessionsQuery, None),
    "getChatSession": ("GET", "/chat/get-chat-session/{session_id}", ["session_id"], GetChatSessionQuery, None),
    "chatRename": ("PUT", "/chat/rename-chat-session", [], None, ChatRenameRequest),
    "chatSessionUpdate": ("PATCH", "/chat/chat-session/{session_id}", ["session_id"], None, ChatSessionUpdateRequest),
    "deleteChatSession": ("DELETE", "/chat/delete-chat-session/{session_id}", ["session_id"], DeleteChatSessionQuery, None),
    "stopChatSession": ("POST", "/chat/stop-chat-session/{chat_session_id}", ["chat_session_id"], None, None),
    "chatFeedback": ("POST", "/chat/create-chat-message-feedback", [], None, ChatFeedbackRequest),
    "removeChatFeedback": ("DELETE", "/chat/remove-chat-message-feedback", [], RemoveChatFeedbackQuery, None),
    "defaultAssistantUpdate": ("PATCH", "/admin/default-assistant", [], None, DefaultAssistantUpdateRequest),
    "personaCreate": ("POST", "/persona", [], None, PersonaUpsertRequest),
    "personaUpdate": ("PATCH", "/persona/{persona_id}", ["persona_id"], None, PersonaUpsertRequest),
    "personaGet": ("GET", "/persona/{persona_id}", ["persona_id"], None, None),
    "personasQuery": ("GET", "/persona", [], PersonasQuery, None),
    "adminPersonasQuery": ("GET", "/admin/persona", [], AdminPersonasQuery, None),
    "agentsQuery": ("GET", "/agents", [], AgentsQuery, None),
    "adminAgentsQuery": ("GET", "/admin/agents", [], AgentsQuery, None),
    "personaListed": ("PATCH", "/admin/persona/{persona_id}/listed", ["persona_id"], None, IsListedRequest),
    "personaFeatured": ("PATCH", "/admin/persona/{persona_id}/featured", ["persona_id"], None, IsFeaturedRequest),
    "personaPublic": ("PATCH", "/persona/{persona_id}/public", ["persona_id"], None, IsPublicRequest),
    "displayPriorities": ("PATCH", "/admin/agents/display-priorities", [], None, DisplayPriorityRequest),
    "personaLabelCreate": ("POST", "/persona/labels", [], None, PersonaLabelCreate),
    "personaLabelPatch": ("PATCH", "/admin/persona/label/{label_id}", ["label_id"], None, PersonaLabelPatchRequest),
    "personaLabelDelete": ("DELETE", "/admin/persona/label/{label_id}", ["label_id"], None, None),
    "personaShare": ("PATCH", "/persona/{persona_id}/share", ["persona_id"], None, PersonaShareRequest),
    "personaTransfer": ("POST", "/persona/{persona_id}/transfer-ownership", ["persona_id"], None,
                        TransferPersonaOwnershipRequest),
    "mcpServerSetup": ("POST", "/admin/mcp/servers/create", [], None, MCPToolCreateRequest),
    "mcpServerUpdate": ("POST", "/admin/mcp/servers/update", [], None, MCPToolUpdateRequest),
    "mcpServerCreate": ("POST", "/admin/mcp/server", [], None, MCPServerSimpleCreateRequest),
    "mcpServerPatch": ("PATCH", "/admin/mcp/server/{server_id}", ["server_id"], None, MCPServerSimpleUpdateRequest),
    "mcpOAuthConnect": ("POST", "/mcp/oauth/connect", [], None, MCPUserOAuthConnectRequest),
    "mcpOAuthCallbackQuery": ("POST", "/mcp/oauth/callback", [], MCPOAuthCallbackQuery, None),
    "mcpUserCredentials": ("POST", "/mcp/user-credentials", [], None, MCPUserCredentialsRequest),
    "mcpStatusQuery": ("PATCH", "/admin/mcp/server/{server_id}/status", ["server_id"], MCPStatusQuery, None),
    "mcpSnapshotsQuery": ("GET", "/admin/mcp/server/{server_id}/tools/snapshots", ["server_id"], MCPSnapshotsQuery, None),
    "statusQuery": ("GET", "/manage/admin/connector/status", [], StatusQuery, None),
    "auditQuery": ("GET", "/admin/audit-log", [], AuditQuery, None),
    "register": ("POST", "/auth/register", [], None, RegisterRequest),
    "login": ("POST", "/auth/login", [], None, None),
    "setUserRole": ("PATCH", "/manage/set-user-role", [], None, SetUserRole),
    "userEmail": ("PATCH", "/manage/admin/deactivate-user", [], None, UserEmail),
    "inviteUsers": ("PUT", "/manage/admin/users", [], None, InviteUsers),
    "changePassword": ("POST", "/auth/change-password", [], None, ChangePassword),
    "usersQuery": ("GET", "/manage/users/accepted", [], UsersQuery, None),
    "sessionsQuery": ("GET", "/manage/admin/sessions", [], SessionsQuery, None),
    "setPermission": ("PUT", "/manage/admin/user-group/{group_id}/permissions", ["group_id"], None, SetPermission),
    "indexingStatus": ("POST", "/manage/admin/connector/indexing-status", [], None, IndexingStatusRequest),
    "groupsQuery": ("GET", "/manage/admin/user-group", [], GroupsQuery, None),
    "uploadFilesQuery": ("POST", "/manage/admin/connector/file/upload", [], UploadFilesQuery, None),
    # The whole upload: its query and its multipart files (handle_upload).
    "uploadFiles": ("POST", "/manage/admin/connector/file/upload", [], UploadFilesQuery, None),
    "ingestionDocument": ("POST", "/onyx-api/ingestion", [], None, IngestionDocument),
    "sendSearchQuery": ("POST", "/search/send-search-message", [], None, SendSearchQueryRequest),
    "searchRequest": ("POST", "/search", [], None, SearchRequest),
    # A change of a file connector's files: its path parameter and its
    # multipart form (handle_update_files).
    "updateFiles": ("POST", "/manage/admin/connector/{connector_id}/files/update", ["connector_id"], None, None),
    "runConnectorRequest": ("POST", "/manage/admin/connector/run-once", [], None, RunConnectorRequest),
    "indexAttemptsQuery": ("GET", "/manage/admin/cc-pair/{cc_pair_id}/index-attempts", ["cc_pair_id"], IndexAttemptsQuery, None),
    "pairDocumentsQuery": ("GET", "/manage/admin/cc-pair/{cc_pair_id}/documents", ["cc_pair_id"], PairDocumentsQuery, None),
    "attemptErrorsQuery": ("GET", "/manage/admin/cc-pair/{cc_pair_id}/errors", ["cc_pair_id"], AttemptErrorsQuery, None),
    "workerRegistration": ("POST", "/worker/register", [], None, WorkerRegister),
    "workerRegistrationCreate": ("POST", "/admin/worker/registration-token", [], None, WorkerRegistrationCreate),
    "heartbeat": ("POST", "/worker/heartbeat", [], None, WorkerHeartbeat),
    "attemptFinish": ("POST", "/worker/attempts/{attempt_id}/finish", ["attempt_id"], None, AttemptFinish),
    "progressReport": ("POST", "/worker/attempts/{attempt_id}/progress", ["attempt_id"], None, AttemptProgress),
    "attemptCredentialUpdate": ("PUT", "/worker/attempts/{attempt_id}/credential", ["attempt_id"], None, AttemptCredential),
    "connectorsQuery": ("GET", "/manage/admin/connector", [], ConnectorsQuery, None),
    "allUsersQuery": ("GET", "/manage/users", [], AllUsersQuery, None),
    "scimTokenCreate": ("POST", "/admin/enterprise-settings/scim/token", [], None, ScimTokenCreate),
}

# Endpoints whose fields are Form parameters, validated one by one.
FORMS = {"login": LoginForm}

# ---------------------------------------------------------------------------
# FastAPI's wrapper, reproduced.

PARSE_ERROR = {"detail": "There was an error parsing the body"}


def jsonable(obj):
    """The part of fastapi.encoders.jsonable_encoder that errors need."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, bytes):
        return obj.decode()
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, BaseException):
        # A validator's ValueError in ctx: dict(obj) fails, vars(obj) is {}.
        return {}
    return obj


def errors_with_loc(exc, prefix):
    out = []
    for err in exc.errors(include_url=False):
        err = dict(err)
        err["loc"] = tuple(prefix) + tuple(err["loc"])
        out.append(err)
    return out


def missing(loc):
    return {"type": "missing", "loc": loc, "msg": "Field required", "input": None}


def read_body(content_type, body):
    """routing.get_request_handler: returns (value, None) or (None, response)."""
    try:
        if not body:
            return None, None
        json_body = Ellipsis
        if not content_type:
            json_body = json.loads(body)
        else:
            message = email.message.Message()
            message["content-type"] = content_type
            if message.get_content_maintype() == "application":
                subtype = message.get_content_subtype()
                if subtype == "json" or subtype.endswith("+json"):
                    json_body = json.loads(body)
        return (body if json_body is Ellipsis else json_body), None
    except json.JSONDecodeError as e:
        err = {"type": "json_invalid", "loc": ["body", e.pos], "msg": "JSON decode error",
               "input": {}, "ctx": {"error": e.msg}}
        return None, (422, {"detail": [err]})
    except Exception:
        return None, (400, PARSE_ERROR)


def query_items(query):
    from urllib.parse import parse_qsl
    # Starlette: QueryParams(scope["query_string"].decode("latin-1")).
    return parse_qsl(query.encode("ascii").decode("latin-1"), keep_blank_values=True)


def query_values(model, query):
    """request_params_to_args for a single query model (FastAPI >= 0.115)."""
    items = query_items(query)
    params = {}
    for name, field in model.model_fields.items():
        vals = [v for k, v in items if k == name]
        origin = getattr(field.annotation, "__origin__", None)
        if origin is list:
            if vals:
                params[name] = vals
        elif vals:
            params[name] = vals[-1]
    return params


def form_items(content_type, body):
    """Starlette's request.form() for a urlencoded body: python-multipart's
    QuerystringParser (not strict) splits the fields (on "&", or on ";"
    where no "&" follows, skipping separators before a field), and each
    name and value is unquote_plus(bytes.decode("latin-1")). A body of
    another content type is an empty form."""
    from urllib.parse import unquote_plus
    if not content_type:
        return []
    ctype = content_type.split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        return []
    data, items, i = body, [], 0
    while i < len(data):
        if data[i:i + 1] in (b"&", b";"):
            i += 1
            continue
        sep = data.find(b"&", i)
        if sep == -1:
            sep = data.find(b";", i)
        end = len(data) if sep == -1 else sep
        name, _, value = data[i:end].partition(b"=")
        items.append((unquote_plus(name.decode("latin-1")), unquote_plus(value.decode("latin-1"))))
        i = end + 1
    return items


def handle_form(model, content_type, body):
    """fastapi/dependencies/utils.py request_body_to_args for Form fields:
    each field on its own, the last value of a name counting (Starlette's
    FormData.get), an absent or empty value missing (or its default)."""
    items = dict(form_items(content_type, body))
    errors, values = [], {}
    for name, field in model.model_fields.items():
        value = items.get(name)
        if value is None or value == "":
            if field.is_required():
                errors.append(missing(("body", name)))
            continue
        try:
            tp = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
            TypeAdapter(tp).validate_python(value)
            values[name] = value
        except ValidationError as e:
            errors += errors_with_loc(e, ("body", name))
    if errors:
        return 422, {"detail": json.loads(json.dumps(jsonable(errors), ensure_ascii=False))}, None
    return 200, {"ok": True}, {"form": model.model_validate(values)}


def multipart_fields(content_type, body):
    """The (name, file name or None) of each part of a multipart/form-data
    body, as Starlette's request.form() reads them; another content type is
    an empty form."""
    import email.parser
    import email.policy
    if not content_type or content_type.split(";")[0].strip().lower() != "multipart/form-data":
        return []
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    return [(part.get_param("name", header="content-disposition"), part.get_filename()) for part in msg.iter_parts()]


def handle_upload(query, content_type, body):
    """upload_files_api(files: list[UploadFile], unzip: bool = True): the
    query parameter's errors, then the body's. files is a File parameter,
    so FastAPI embeds it: absent, it is missing at ("body", "files")
    (request_body_to_args, get_missing_field_error). Parts named files
    without a file name are not mirrored (Quarry skips them, as Onyx's
    upload does)."""
    errors, decoded = [], {}
    try:
        decoded["query"] = UploadFilesQuery.model_validate(query_values(UploadFilesQuery, query), from_attributes=True)
    except ValidationError as e:
        errors += errors_with_loc(e, ("query",))
    files = [f for name, f in multipart_fields(content_type, body) if name == "files"]
    if not files:
        errors.append(missing(("body", "files")))
    if errors:
        return 422, {"detail": json.loads(json.dumps(jsonable(errors), ensure_ascii=False))}, None
    return 200, {"ok": True}, None


def handle_update_files(path_params, content_type, body):
    """update_connector_files(connector_id: int, files: list[UploadFile] |
    None = File(None), file_ids_to_remove: str = Form("[]")): both form
    fields have defaults, and a body that is not a form is an empty form
    (Starlette), so only the path parameter can fail. Parts that are not
    what their field expects (a files part without a file name, a file as
    file_ids_to_remove) are not mirrored."""
    try:
        decoded = {"connector_id": TypeAdapter(Int64).validate_python(path_params["connector_id"])}
    except ValidationError as e:
        errors = errors_with_loc(e, ("path", "connector_id"))
        return 422, {"detail": json.loads(json.dumps(jsonable(errors), ensure_ascii=False))}, None
    return 200, {"ok": True}, decoded


# The path parameters that are UUIDs (a chat session's id); the others are
# integers.
UUID_PATHS = {"session_id", "chat_session_id"}


def handle(model_name, path_params, query, content_type, body):
    """Return FastAPI's (status, response body, validated values)."""
    if model_name in FORMS:
        return handle_form(FORMS[model_name], content_type, body)
    if model_name == "uploadFiles":
        return handle_upload(query, content_type, body)
    if model_name == "updateFiles":
        return handle_update_files(path_params, content_type, body)
    _, _, path_names, query_model, body_model = ENDPOINTS[model_name]
    value = None
    if body_model is not None:
        value, response = read_body(content_type, body)
        if response:
            return response + (None,)
    errors, decoded = [], {}
    for name in path_names:
        try:
            decoded[name] = TypeAdapter(uuid.UUID if name in UUID_PATHS else Int64).validate_python(path_params[name])
        except ValidationError as e:
            errors += errors_with_loc(e, ("path", name))
    if query_model is not None:
        try:
            decoded["query"] = query_model.model_validate(query_values(query_model, query), from_attributes=True)
        except ValidationError as e:
            errors += errors_with_loc(e, ("query",))
    if body_model is not None:
        if value is None:
            errors.append(missing(("body",)))
        else:
            try:
                decoded["body"] = TypeAdapter(body_model).validate_python(value, from_attributes=True)
            except ValidationError as e:
                errors += errors_with_loc(e, ("body",))
    if errors:
        try:
            detail = json.loads(json.dumps(jsonable(errors), ensure_ascii=False, allow_nan=False))
        except (ValueError, UnicodeError):
            return 500, {"detail": "Internal server error"}, None
        return 422, {"detail": detail}, None
    return 200, {"ok": True}, decoded


def dump(v):
    """A validated value as the golden test compares it. fields_set lists the
    `T | None = None` fields that were sent, in declaration order."""
    if isinstance(v, BaseModel):
        fields = type(v).model_fields
        optional = [k for k in fields if k in v.model_fields_set and fields[k].default is None]
        return {"fields_set": optional,
                "values": {k: dump(getattr(v, k)) for k in type(v).model_fields}}
    if isinstance(v, datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        v = v.astimezone(timezone.utc)
        return "%04d-%s" % (v.year, v.strftime("%m-%dT%H:%M:%S.%fZ"))
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, uuid.UUID):
        return str(v)
    if dataclasses.is_dataclass(v):
        return {"fields_set": [], "values": {f.name: dump(getattr(v, f.name)) for f in dataclasses.fields(v)}}
    if isinstance(v, (set, frozenset)):
        return sorted(dump(x) for x in v)
    if isinstance(v, list):
        return [dump(x) for x in v]
    if isinstance(v, dict):
        return {(k.value if isinstance(k, enum.Enum) else k): dump(x) for k, x in v.items()}
    return v


# ---------------------------------------------------------------------------
# The corpus.

J = "application/json"
CASES = []


SESSION = "8a9c2b4e-1f3d-4c5b-9e6a-7d8f0a1b2c3d"


def case(model, name, body=None, ct=J, path=None, query="", raw=None):
    """Add a request. body is a JSON-able value or, as raw, the exact text/bytes."""
    if raw is None and body is not None:
        raw = json.dumps(body, ensure_ascii=False)
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    params = {k: (SESSION if k in UUID_PATHS else "7") for k in ENDPOINTS[model][2]}
    params.update(path or {})
    CASES.append(dict(model=model, name=name, body=raw or b"", ct=ct, path=params, query=query))


def corpus():
    big = "9" * 25
    # Body handling, common to every model.
    for m in ["toolUpdate", "credentialCreate", "setCurator", "apiKeyCreate"]:
        case(m, "empty body", raw=b"")
        case(m, "null body", raw="null")
        case(m, "array body", raw='[1, "a", {"b": null}]')
        case(m, "string body", raw='"hello"')
        case(m, "number body", raw="12.50")
        case(m, "text/plain body", raw='{"name": "x"}', ct="text/plain")
        case(m, "truncated json", raw='{"name": "é', ct=J)
    case("toolUpdate", "no content type", raw='{"name": 5}', ct=None)
    case("toolUpdate", "vnd+json", raw='{"name": 5}', ct="application/vnd.api+json; charset=utf-8")
    case("toolUpdate", "uppercase json", raw='{"name": 5}', ct="  Application/JSON ; q=1")
    case("toolUpdate", "form urlencoded", raw="name=x", ct="application/x-www-form-urlencoded")
    case("toolUpdate", "bad content type", raw='{"name": 5}', ct="json")
    case("toolUpdate", "json-seq", raw='{"name": 5}', ct="application/json-seq")
    case("toolUpdate", "invalid utf-8", raw=b'{"name": "\xff"}')
    case("toolUpdate", "utf-16 body", raw='{"name": 1}'.encode("utf-16"))
    case("toolUpdate", "utf-8 bom", raw=b'\xef\xbb\xbf{"name": "bom"}')
    case("toolUpdate", "too deep", raw="[" * 5000 + "]" * 5000)
    case("toolUpdate", "huge int literal", raw='{"oauth_config_id": ' + "1" * 4301 + "}")
    case("toolUpdate", "whitespace body", raw=" \n\t ")
    case("toolUpdate", "trailing garbage", raw='{"name": "a"} x')
    case("toolUpdate", "single quotes", raw="{'name': 'a'}")
    case("toolUpdate", "trailing comma", raw='{"name": "a",}')
    case("toolUpdate", "unicode before error", raw='{"name": "ünïcødé 😀", "x": tru}')
    case("toolUpdate", "bad escape", raw='{"name": "a\\qb"}')
    case("toolUpdate", "control char", raw='{"name": "a\tb"}')
    # Path parameters.
    case("toolUpdate", "path abc", body={}, path={"tool_id": "abc"})
    case("toolUpdate", "path float", body={}, path={"tool_id": "1.5"})
    case("toolUpdate", "path 1.0", body={}, path={"tool_id": "1.0"})
    case("toolUpdate", "path spaces", body={}, path={"tool_id": " 42 "})
    case("toolUpdate", "path underscores", body={}, path={"tool_id": "1_000"})
    case("toolUpdate", "path huge", body={}, path={"tool_id": big})
    case("toolUpdate", "path negative huge", body={}, path={"tool_id": "-" + big})
    case("toolUpdate", "path and body errors", body={"name": 1, "passthrough_auth": "maybe"}, path={"tool_id": "x"})
    case("toolUpdate", "path error and bad json", raw="{", path={"tool_id": "x"})
    case("credentialPatch", "credential path abc", body={}, path={"credential_id": "abc"})
    case("credentialPatch", "credential path empty", body={}, path={"credential_id": ""})
    case("ccPairCreate", "both path params bad", body={"name": "n", "access_type": "public"},
         path={"connector_id": "a", "credential_id": "1e3"})
    # toolUpdate.
    case("toolUpdate", "all fields odd but valid", body={
        "name": "n", "description": None, "definition": {"b": 1, "a": [1, 2.5, None], "c": {"d": "é"}},
        "custom_headers": [{"key": "k", "value": "v", "extra": 1}], "passthrough_auth": "yes",
        "oauth_config_id": "12", "unknown": [1]})
    case("toolUpdate", "all null", body={k: None for k in ToolUpdate.model_fields})
    case("toolUpdate", "empty object", body={})
    case("toolUpdate", "wrong types", body={
        "name": 1, "description": True, "definition": [], "custom_headers": {}, "passthrough_auth": 2,
        "oauth_config_id": 1.5})
    case("toolUpdate", "definition string", body={"definition": "{}"})
    case("toolUpdate", "definition number", body={"definition": 3})
    case("toolUpdate", "headers bad items", body={"custom_headers": ["x", 1, None, {"key": 1}, {}, [],
                                                                  {"key": "a", "value": None}]})
    case("toolUpdate", "headers string", body={"custom_headers": "k: v"})
    case("toolUpdate", "oauth id forms", body={"oauth_config_id": " 0012 "})
    case("toolUpdate", "oauth id float", body={"oauth_config_id": 3.0})
    case("toolUpdate", "oauth id bool", body={"oauth_config_id": True})
    case("toolUpdate", "oauth id 1e20", body={"oauth_config_id": 1e20})
    case("toolUpdate", "oauth id huge int", raw='{"oauth_config_id": %s}' % big)
    case("toolUpdate", "oauth id huge negative", raw='{"oauth_config_id": -%s}' % big)
    case("toolUpdate", "oauth id max", raw='{"oauth_config_id": 9223372036854775807}')
    case("toolUpdate", "oauth id max+1", raw='{"oauth_config_id": 9223372036854775808}')
    case("toolUpdate", "oauth id string huge", body={"oauth_config_id": big})
    case("toolUpdate", "oauth id string 4301 digits", body={"oauth_config_id": "1" * 4301})
    case("toolUpdate", "oauth id string garbage", body={"oauth_config_id": "12abc"})
    case("toolUpdate", "oauth id 1e3 string", body={"oauth_config_id": "1e3"})
    case("toolUpdate", "oauth id -0", raw='{"oauth_config_id": -0}')
    case("toolUpdate", "oauth id list", body={"oauth_config_id": [1]})
    case("toolUpdate", "passthrough variants", body={"passthrough_auth": "OFF"})
    case("toolUpdate", "passthrough t", body={"passthrough_auth": "t"})
    case("toolUpdate", "passthrough 0.0", body={"passthrough_auth": 0.0})
    case("toolUpdate", "passthrough 1", body={"passthrough_auth": 1})
    case("toolUpdate", "passthrough 0.5", body={"passthrough_auth": 0.5})
    case("toolUpdate", "passthrough 2.0", body={"passthrough_auth": 2.0})
    case("toolUpdate", "passthrough space", body={"passthrough_auth": " true"})
    case("toolUpdate", "passthrough null", body={"passthrough_auth": None})
    case("toolUpdate", "duplicate keys", raw='{"name": 1, "name": "second", "x": 1, "name": 3}')
    case("toolUpdate", "escaped key", raw='{"n\\u0061me": "escaped"}')
    case("toolUpdate", "surrogate pair", raw='{"name": "\\ud83d\\ude00 \\u00e9"}')
    case("toolUpdate", "floats echoed", raw='{"name": [1.0, 1e16, 1.5e-7, 0.0001, -0.0, 123456789.125, 1E2]}')
    case("toolUpdate", "nested echo", raw='{"name": {"b": [true, null, "x\\n\\"y"], "a": {"a": 1, "a": 2}}}')
    # toolCreate.
    case("toolCreate", "valid minimal", body={"name": "n", "definition": {}, "passthrough_auth": False})
    case("toolCreate", "missing all", body={})
    case("toolCreate", "missing some", body={"name": "n", "unknown": {"deep": [1, 2]}})
    case("toolCreate", "null required", body={"name": None, "definition": None, "passthrough_auth": None})
    case("toolCreate", "name number", body={"name": 12, "definition": {"x": 1}, "passthrough_auth": "n"})
    case("toolCreate", "headers ok", body={"name": "n", "definition": {"openapi": "3.0"}, "passthrough_auth": "on",
                                          "custom_headers": [{"key": "a", "value": "b"}, {"value": "c", "key": "d"}]})
    case("toolCreate", "header missing value", body={"name": "n", "definition": {}, "passthrough_auth": True,
                                                     "custom_headers": [{"key": "a"}]})
    case("toolCreate", "definition nested raw", raw='{"name":"n","definition":{"z":1,"a":{"y":[1.50,2E3]},"z":2},'
                                                    '"passthrough_auth":false}')
    case("toolCreate", "no passthrough_auth (older Onyx clients)", body={"name": "n", "definition": {"openapi": "3.1"}})
    # toolStatusUpdate.
    case("toolStatusUpdate", "valid", body={"tool_ids": [1, "2"], "enabled": "off"})
    case("toolStatusUpdate", "missing", body={})
    case("toolStatusUpdate", "bad", body={"tool_ids": [1, None, "x"], "enabled": "sometimes"})
    case("toolStatusUpdate", "ids not a list", body={"tool_ids": 3, "enabled": None})
    case("toolStatusUpdate", "ids past the maximum", body={"tool_ids": [1] * 1001, "enabled": True})
    # toolValidate.
    case("toolValidate", "valid", body={"definition": {"paths": {}}})
    case("toolValidate", "missing", body={"def": {}})
    case("toolValidate", "definition list", body={"definition": [{"a": 1}]})
    case("toolValidate", "definition null", body={"definition": None})
    case("toolValidate", "definition bool", body={"definition": False})
    case("toolValidate", "raw preserved", raw='{"definition": {"b":1,  "a" : 1.10, "c": "\\u00e9"}}')
    # credentialPatch.
    case("credentialPatch", "valid all", body={"credential_json": {"k": "v"}, "admin_public": "1", "name": "c",
                                              "curator_public": "no", "groups": [1, "2", 3.0], "source": "slack"})
    case("credentialPatch", "nulls", body={"credential_json": None, "groups": None, "source": None})
    case("credentialPatch", "bad source", body={"source": "Slack"})
    case("credentialPatch", "source number", body={"source": 1})
    case("credentialPatch", "groups bad items", body={"groups": [1, None, "x", 1.5, True, [], "2.0", " 3 "]})
    case("credentialPatch", "groups string", body={"groups": "1,2"})
    case("credentialPatch", "groups dict", body={"groups": {"0": 1}})
    case("credentialPatch", "credential_json list", body={"credential_json": ["a"]})
    case("credentialPatch", "admin_public words", body={"admin_public": "Y", "curator_public": "FALSE"})
    case("credentialPatch", "admin_public bad word", body={"admin_public": "yep"})
    # Every other field of the credential PATCH, its path and its body.
    for raw_name, raw in [("empty body", b""), ("null body", "null"), ("array body", "[]"),
                          ("text/plain body", None), ("trailing comma", '{"name": "a",}')]:
        if raw is None:
            case("credentialPatch", raw_name, raw='{"name": "x"}', ct="text/plain")
        else:
            case("credentialPatch", raw_name, raw=raw)
    case("credentialPatch", "path float", body={}, path={"credential_id": "1.5"})
    case("credentialPatch", "path huge", body={}, path={"credential_id": big})
    case("credentialPatch", "path negative", body={}, path={"credential_id": "-3"})
    case("credentialPatch", "name not a string", body={"name": 12})
    case("credentialPatch", "name list", body={"name": ["a"]})
    case("credentialPatch", "curator_public bad", body={"curator_public": "maybe"})
    case("credentialPatch", "curator_public object", body={"curator_public": {}})
    case("credentialPatch", "credential_json string", body={"credential_json": "{}"})
    case("credentialPatch", "credential_json number", body={"credential_json": 3})
    case("credentialPatch", "groups huge", body={"groups": [int(big)]})
    case("credentialPatch", "every field wrong", body={"credential_json": [], "admin_public": "x", "name": False,
         "curator_public": 2, "groups": [None], "source": "nowhere"}, path={"credential_id": "x"})
    # credentialDataUpdate.
    case("credentialDataUpdate", "valid", body={"name": "n", "credential_json": {"token": "t"}})
    case("credentialDataUpdate", "missing", body={})
    case("credentialDataUpdate", "name null", body={"name": None, "credential_json": {}})
    case("credentialDataUpdate", "bad types", body={"name": 5, "credential_json": "{}"})
    case("credentialDataUpdate", "bad path and body", body={"credential_json": []}, path={"credential_id": "x"})
    # credentialCreate.
    case("credentialCreate", "valid defaults", body={"credential_json": {}, "admin_public": True, "source": "web"})
    case("credentialCreate", "missing all", body={})
    case("credentialCreate", "bad everything", body={"credential_json": "x", "admin_public": "x", "source": "x",
                                                    "name": 1, "curator_public": None, "groups": None})
    case("credentialCreate", "groups ok", body={"credential_json": {"a": {"b": None}}, "admin_public": 0,
                                               "source": "google_drive", "groups": ["7", 8], "name": None})
    case("credentialCreate", "groups with huge", raw='{"credential_json":{},"admin_public":1,"source":"file",'
                                                     '"groups":[1,%s,-%s]}' % (big, big))
    # connectorInput.
    good_conn = {"name": "c", "source": "web", "input_type": "poll", "connector_specific_config": {"url": "u"}}
    case("connectorInput", "valid", body=good_conn)
    case("connectorInput", "missing all", body={})
    case("connectorInput", "bad enums", body=dict(good_conn, source="WEB", input_type="push", access_type="open"))
    case("connectorInput", "freqs as strings", body=dict(good_conn, refresh_freq="3600", prune_freq="86400.000"))
    case("connectorInput", "freqs bad", body=dict(good_conn, refresh_freq="1h", prune_freq=1.25))
    case("connectorInput", "groups list_type", body=dict(good_conn, groups=5))
    case("connectorInput", "groups null", body=dict(good_conn, groups=None))
    case("connectorInput", "groups with null", body=dict(good_conn, groups=[1, None]))
    case("connectorInput", "access types", body=dict(good_conn, access_type="sync"))
    for i, start in enumerate([
            "2024-01-02T03:04:05Z", "2024-01-02T03:04:05+02:00", "2024-01-02", "2024-01-02 03:04",
            "2024-01-02T03:04:05.123456789", "1700000000", "1700000000.5", 1700000000, 1700000000.25, 0,
            -1.25, 20000000001, "2024-01-02T03:04:05−01:30", "2024-01-02t03:04:05z", "2024-02-29T00:00:00"]):
        case("connectorInput", "indexing_start ok %d" % i, body=dict(good_conn, indexing_start=start))
    for i, start in enumerate([
            "yesterday", "", "2024-13-01", "2024-02-30", "2024-01-02T25:00:00", "2024/01/02", "2024-01-02T03:04:05+24:00",
            "0000-01-01", "0000-01-01T00:00:00Z", "99999999999999999999", "-99999999999999999", 1e20, -1e20, True,
            [], {}, "2024-01-02T03", " 2024-01-02", "2024-01-02 ", "1e10", 253402300800000, big]):
        case("connectorInput", "indexing_start bad %d" % i,
             raw=json.dumps(dict(good_conn, indexing_start=start)) if start is not big
             else json.dumps(good_conn)[:-1] + ', "indexing_start": %s}' % big)
    case("connectorInput", "config not dict", body=dict(good_conn, connector_specific_config="{}"))
    # ccPairCreate.
    case("ccPairCreate", "valid", body={"name": "p", "access_type": "private", "groups": []})
    case("ccPairCreate", "missing", body={"groups": [1]})
    case("ccPairCreate", "bad access", body={"name": "p", "access_type": None})
    case("ccPairCreate", "bad access int", body={"name": "p", "access_type": 0})
    case("ccPairCreate", "groups nested", body={"name": "p", "access_type": "public", "groups": [[1]]})
    # ccPairStatusUpdate, ccPairRename, ccPairIdentifier.
    case("ccPairStatusUpdate", "valid", body={"status": "PAUSED"})
    case("ccPairStatusUpdate", "missing", body={})
    case("ccPairStatusUpdate", "lower case", body={"status": "paused"})
    case("ccPairStatusUpdate", "onyx's other states", body={"status": "DELETING"})
    case("ccPairStatusUpdate", "null", body={"status": None})
    case("ccPairStatusUpdate", "bad path", body={"status": "ACTIVE"}, path={"cc_pair_id": "1.5"})
    case("ccPairRename", "valid", query="new_name=wiki+2")
    case("ccPairRename", "missing", query="")
    case("ccPairRename", "empty", query="new_name=")
    case("ccPairRename", "last wins", query="new_name=a&new_name=b")
    case("ccPairRename", "bad path", query="", path={"cc_pair_id": "x"})
    case("ccPairIdentifier", "valid", body={"connector_id": 1, "credential_id": "2"})
    case("ccPairIdentifier", "missing", body={"connector_id": 1})
    case("ccPairIdentifier", "bad", body={"connector_id": 1.5, "credential_id": None})
    case("ccPairIdentifier", "huge", raw='{"connector_id": %s, "credential_id": -%s}' % (big, big))
    # addUsers.
    case("addUsers", "valid", body={"user_ids": ["u1", "u2"]})
    case("addUsers", "missing", body={})
    case("addUsers", "bad items", body={"user_ids": ["u", 5, None]})
    case("addUsers", "not a list", body={"user_ids": "u"}, path={"group_id": "g"})
    # userGroupCreate / userGroupUpdate.
    case("userGroupCreate", "valid defaults", body={"name": "g"})
    case("userGroupCreate", "missing name", body={"user_ids": ["u"]})
    case("userGroupCreate", "bad ids", body={"name": "g", "user_ids": [1, "u", None], "cc_pair_ids": ["a", 2]})
    case("userGroupCreate", "user_ids string", body={"name": "g", "user_ids": "u1"})
    case("userGroupUpdate", "valid", body={"name": "g", "user_ids": [], "cc_pair_ids": [1, "2"]})
    case("userGroupUpdate", "nulls", body={"name": None, "user_ids": None, "cc_pair_ids": None})
    case("userGroupUpdate", "bad", body={"name": [], "user_ids": [{}], "cc_pair_ids": [1.1]})
    case("userGroupUpdate", "path bad", body={}, path={"group_id": "g1"})
    # setCurator.
    case("setCurator", "valid", body={"user_id": "u", "is_curator": "true"})
    case("setCurator", "missing", body={})
    case("setCurator", "bad", body={"user_id": 5, "is_curator": "sometimes"})
    case("setCurator", "is_curator int 2", body={"user_id": "u", "is_curator": 2})
    case("setCurator", "is_curator huge", raw='{"user_id": "u", "is_curator": %s}' % big)
    # apiKeyCreate.
    case("apiKeyCreate", "valid default role", body={})
    case("apiKeyCreate", "valid role", body={"name": "k", "role": "admin"})
    case("apiKeyCreate", "bad role", body={"role": "root"})
    case("apiKeyCreate", "null role", body={"role": None})
    case("apiKeyCreate", "name null", body={"name": None})
    # oauthConfigCreate.
    good_oauth = {"name": "o", "authorization_url": "https://a", "token_url": "https://t",
                  "client_id": "c", "client_secret": "s"}
    case("oauthConfigCreate", "valid", body=good_oauth)
    case("oauthConfigCreate", "missing all", body={})
    case("oauthConfigCreate", "scopes bad", body=dict(good_oauth, scopes=["a", 1, None]))
    case("oauthConfigCreate", "scopes string", body=dict(good_oauth, scopes="a b"))
    case("oauthConfigCreate", "urls numbers", body=dict(good_oauth, token_url=1, authorization_url=None))
    case("oauthConfigCreate", "scopes ok", body=dict(good_oauth, scopes=[]))
    case("oauthConfigCreate", "additional params", body=dict(good_oauth, additional_params={"access_type": "offline"}))
    case("oauthConfigCreate", "additional params not an object", body=dict(good_oauth, additional_params=["a"]))
    case("oauthConfigCreate", "additional params null", body=dict(good_oauth, additional_params=None))
    # oauthConfigUpdate.
    case("oauthConfigUpdate", "empty", body={})
    case("oauthConfigUpdate", "every field", body=dict(good_oauth, scopes=["a"], additional_params={"x": "y"},
                                                      clear_client_id="true", clear_client_secret=0))
    case("oauthConfigUpdate", "nulls", body={"name": None, "client_secret": None, "scopes": None, "additional_params": None})
    case("oauthConfigUpdate", "bad types", body={"name": 1, "scopes": "a", "clear_client_id": "maybe",
                                                 "clear_client_secret": None, "additional_params": "x"})
    case("oauthConfigUpdate", "bad path", body={}, path={"oauth_config_id": "x"})
    case("oauthConfigUpdate", "not an object", body=["name"])
    # oauthInitiate.
    case("oauthInitiate", "valid", body={"oauth_config_id": 3})
    case("oauthInitiate", "valid return path", body={"oauth_config_id": "3", "return_path": "/#tool/3"})
    case("oauthInitiate", "missing", body={})
    case("oauthInitiate", "bad", body={"oauth_config_id": "x", "return_path": None})
    case("oauthInitiate", "float id", body={"oauth_config_id": 1.5})
    # oauthCallbackQuery.
    case("oauthCallbackQuery", "valid", query="code=abc&state=xyz")
    case("oauthCallbackQuery", "missing both", query="")
    case("oauthCallbackQuery", "missing state", query="code=abc")
    case("oauthCallbackQuery", "empty values", query="code=&state=")
    case("oauthCallbackQuery", "last wins", query="code=a&code=b&state=s")
    # toolRun.
    case("toolRun", "valid", body={"method": "getWeather", "args": {"city": "Oslo", "days": 3}})
    case("toolRun", "valid without args", body={"method": "ping"})
    case("toolRun", "missing method", body={"args": {}})
    case("toolRun", "bad types", body={"method": 5, "args": ["city"]})
    case("toolRun", "args null", body={"method": "m", "args": None})
    case("toolRun", "bad path", body={"method": "m"}, path={"tool_id": "t"})
    case("toolRun", "not an object", body="run")

    # Personal access tokens (Onyx's CreateTokenRequest).
    case("patCreate", "valid", body={"name": "laptop", "expiration_days": 30, "scopes": ["basic", "read:search"]})
    case("patCreate", "valid unscoped", body={"name": "x", "expiration_days": None})
    case("patCreate", "empty name", body={"name": ""})
    case("patCreate", "long name", body={"name": "é" * 101})
    case("patCreate", "100 characters", body={"name": "é" * 100})
    case("patCreate", "bad days and scopes", body={"name": "n", "expiration_days": 0, "scopes": ["admin", "root", 5]})
    case("patCreate", "lax", body={"name": "n", "expiration_days": "7", "scopes": "basic"})
    case("patCreate", "missing", body={"expiration_days": 1})

    # Model providers (Onyx's LLM models).
    good_llm = {"name": "gpt", "provider": "openai", "api_key": "sk-x", "model_configurations": [
        {"name": "gpt-4o-mini", "is_visible": True, "max_input_tokens": 128000}]}
    case("llmProviderUpsert", "valid", body=good_llm, query="is_creation=true")
    case("llmProviderUpsert", "valid every field", body=dict(good_llm, api_base="https://h/v1", api_version=None,
                                                             custom_config={"a": "b"}, is_public="false", is_auto_mode=0,
                                                             groups=[1, "2"], personas=[], deployment_name="d", id="3",
                                                             api_key_changed="yes", custom_config_changed=False),
         query="is_creation=false")
    case("llmProviderUpsert", "missing", body={"name": "x"})
    case("llmProviderUpsert", "provider not a string", body={"provider": 5})
    case("llmProviderUpsert", "nulls", body={"provider": "openai", "is_public": None, "groups": None, "model_configurations": None,
                                             "name": None, "id": None})
    case("llmProviderUpsert", "bad types", body={"provider": "openai", "api_key": 1, "custom_config": {"a": 1, "b": None},
                                                 "groups": ["g"], "personas": "1", "id": 1.5, "api_key_changed": "maybe"})
    case("llmProviderUpsert", "bad models", body={"provider": "openai", "model_configurations": [
        {"name": "m"}, "gpt", {"name": None, "is_visible": "x", "max_input_tokens": "many", "supports_image_input": 2},
        {"name": "n", "is_visible": True, "display_name": 3}]})
    case("llmProviderUpsert", "models not a list", body={"provider": "openai", "model_configurations": {"name": "m"}})
    case("llmProviderUpsert", "custom config not an object", body={"provider": "openai", "custom_config": ["a"]})
    case("llmProviderUpsert", "bad query", body=good_llm, query="is_creation=perhaps")
    case("llmProviderUpsert", "too many groups", body=dict(good_llm, groups=list(range(1001))))
    case("llmProviderUpsert", "not an object", body=["openai"])
    case("llmProviderUpsert", "empty body", raw=b"")
    case("llmProvidersQuery", "valid", query="include_image_gen=true")
    case("llmProvidersQuery", "bad", query="include_image_gen=sometimes")
    case("llmProviderDelete", "valid", query="force=true")
    case("llmProviderDelete", "bad", query="force=2", path={"provider_id": "x"})
    case("defaultModel", "valid", body={"provider_id": 1, "model_name": "gpt-4o-mini"})
    case("defaultModel", "lax", body={"provider_id": "1", "model_name": "m"})
    case("defaultModel", "missing", body={})
    case("defaultModel", "bad", body={"provider_id": None, "model_name": 4})
    case("testLLM", "valid", body={"provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-x",
                                   "api_key_changed": True, "custom_config_changed": False})
    case("testLLM", "valid stored", body={"id": 3, "provider": "openai_compatible", "model": "m", "api_base": "http://h/v1",
                                          "api_key_changed": False, "custom_config_changed": False})
    case("testLLM", "missing flags", body={"provider": "openai", "model": "gpt-4o-mini"})
    case("testLLM", "missing", body={})
    case("testLLM", "bad", body={"id": "x", "provider": None, "model": 1, "custom_config": "a", "api_key_changed": "x",
                                 "custom_config_changed": None})

    # The chat (Onyx v4.6.1's models).
    case("chatSessionCreate", "valid", body={"persona_id": 0, "description": "rocks"})
    case("chatSessionCreate", "defaults", body={})
    case("chatSessionCreate", "bad", body={"persona_id": "x", "description": 5, "incognito": "maybe",
                                           "incognito_session_id": "not-a-uuid"})
    case("chatSessionCreate", "uuid forms", body={"incognito_session_id": "{8A9C2B4E-1F3D-4C5B-9E6A-7D8F0A1B2C3D}"})
    case("chatSessionCreate", "uuid short", body={"incognito_session_id": "8a9c2b4e1f3d4c5b9e6a7d8f0a1b2c3"})
    case("chatSessionCreate", "uuid bad group", body={"incognito_session_id": "8a9c2b4e-1f3d-4c5b-9e6a7d8f0a1b2c3d"})
    case("chatSessionCreate", "uuid bad char", body={"incognito_session_id": "8a9c2b4e-1f3d-4c5b-9e6a-7d8f0a1b2c3g"})
    case("chatSessionCreate", "uuid urn", body={"incognito_session_id": "urn:uuid:8a9c2b4e-1f3d-4c5b-9e6a-7d8f0a1b2c3d"})
    case("chatSessionCreate", "uuid not a string", body={"incognito_session_id": 7})
    case("sendMessage", "valid", body={"message": "hi", "chat_session_id": SESSION})
    case("sendMessage", "valid every field", body={
        "message": "hi", "llm_override": {"model_provider": "local", "model_version": "llama", "temperature": 0.2},
        "allowed_tool_ids": [1, 2], "forced_tool_id": 1, "internal_search_filters": {"source_type": ["web"]},
        "origin": "api", "parent_message_id": None, "chat_session_info": {"persona_id": 0}, "stream": False,
        "include_citations": False, "additional_context": "tab", "mock_llm_response": "ok"})
    case("sendMessage", "missing message", body={"chat_session_id": SESSION})
    case("sendMessage", "both session and info", body={"message": "hi", "chat_session_id": SESSION,
                                                       "chat_session_info": {}})
    case("sendMessage", "bad types", body={"message": 5, "llm_override": {"temperature": "hot"}, "allowed_tool_ids": "1",
                                           "forced_tool_id": "x", "stream": "yes", "origin": "fax",
                                           "parent_message_id": 1.5, "chat_session_id": "abc"})
    case("sendMessage", "bad nested", body={"message": "hi", "chat_session_info": {"persona_id": None},
                                            "internal_search_filters": {"source_type": ["fax"]},
                                            "mcp_headers": {"a": 1}, "file_descriptors": [1]})
    case("sendMessage", "too many overrides", body={"message": "hi", "llm_overrides": [{}] * 101})
    case("sendMessage", "not an object", body=["hi"])
    case("sendMessage", "empty body", raw=b"")
    case("chatSessionsQuery", "valid", query="page_size=10&before=2026-01-01T00:00:00")
    case("chatSessionsQuery", "bad", query="page_size=0&include_failed_chats=maybe&project_id=x")
    case("chatSessionsQuery", "too big a page", query="page_size=101")
    case("getChatSession", "valid", query="is_shared=true")
    case("getChatSession", "bad id", path={"session_id": "nope"}, query="include_deleted=perhaps")
    case("getChatSession", "hex id", path={"session_id": "8a9c2b4e1f3d4c5b9e6a7d8f0a1b2c3d"})
    case("chatRename", "valid", body={"chat_session_id": SESSION, "name": "Rocks"})
    case("chatRename", "no name", body={"chat_session_id": SESSION})
    case("chatRename", "missing", body={})
    case("chatRename", "bad", body={"chat_session_id": 5, "name": 5})
    case("chatSessionUpdate", "valid", body={"sharing_status": "public"})
    case("chatSessionUpdate", "bad", body={"sharing_status": "everyone"})
    case("chatSessionUpdate", "bad id", path={"session_id": "7"}, body={})
    case("deleteChatSession", "valid", query="hard_delete=true")
    case("deleteChatSession", "bad", path={"session_id": "x"}, query="hard_delete=perhaps")
    case("stopChatSession", "valid")
    case("stopChatSession", "bad id", path={"chat_session_id": "x"})
    case("chatFeedback", "valid", body={"chat_message_id": 3, "is_positive": True})
    case("chatFeedback", "text only", body={"chat_message_id": 3, "feedback_text": "meh", "predefined_feedback": "Wrong"})
    case("chatFeedback", "empty feedback", body={"chat_message_id": 3})
    case("chatFeedback", "empty feedback with nulls", body={"chat_message_id": 3, "is_positive": None, "feedback_text": None})
    case("chatFeedback", "bad", body={"chat_message_id": "x", "is_positive": "maybe"})
    case("removeChatFeedback", "valid", query="chat_message_id=3")
    case("removeChatFeedback", "missing")
    case("removeChatFeedback", "bad", query="chat_message_id=x")
    case("defaultAssistantUpdate", "valid", body={"tool_ids": [1, 2], "system_prompt": "Be brief."})
    case("defaultAssistantUpdate", "reset", body={"system_prompt": None})
    case("defaultAssistantUpdate", "bad", body={"tool_ids": ["x"], "system_prompt": 5})
    case("defaultAssistantUpdate", "too many tools", body={"tool_ids": list(range(1001))})

    # Assistants (Onyx's personas).
    member = "6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
    good_persona = {"name": "Helper", "description": "Helps", "document_set_ids": [1], "is_public": False,
                    "starter_messages": [{"name": "Hi", "message": "Say hi"}], "users": [member], "groups": [2],
                    "tool_ids": [3], "label_ids": [4], "is_featured": False, "display_priority": 5,
                    "search_start_date": "2024-01-02T03:04:05Z", "icon_name": "star",
                    "system_prompt": "Be kind.", "task_prompt": "", "datetime_aware": True}
    for m in ["personaCreate", "personaUpdate"]:
        case(m, "valid", body=good_persona)
        case(m, "valid minimal", body={"name": "H", "description": "", "document_set_ids": [], "tool_ids": [],
                                       "system_prompt": "", "task_prompt": "", "datetime_aware": False})
        case(m, "missing", body={})
        case(m, "wrong types", body={"name": 1, "description": None, "document_set_ids": "1", "is_public": "maybe",
                                     "starter_messages": {"name": "x"}, "users": member, "groups": {}, "tool_ids": None,
                                     "search_start_date": "yesterday", "label_ids": [None], "is_featured": 2,
                                     "display_priority": 1.5, "hierarchy_node_ids": None, "document_ids": [1],
                                     "system_prompt": None, "replace_base_system_prompt": "sometimes", "task_prompt": 5,
                                     "datetime_aware": "perhaps"})
        case(m, "bad items", body=dict(good_persona, document_set_ids=[1, "x", None], users=["nope", 7],
                                       starter_messages=[{"name": "a"}, "hi", {"name": 1, "message": []}], tool_ids=[True, 2.5]))
        case(m, "lax values", body=dict(good_persona, document_set_ids=["1", 2.0], is_public="yes", groups=["7"],
                                        users=[member.upper()], datetime_aware="on", display_priority="3"))
        case(m, "nulls", body=dict(good_persona, is_public=None, starter_messages=None, users=None, groups=None, label_ids=None,
                                   display_priority=None, user_file_ids=None, search_start_date=None))
        case(m, "too many", body=dict(good_persona, document_set_ids=list(range(1001)), tool_ids=list(range(1001)),
                                      starter_messages=[{"name": "a", "message": "b"}] * 101))
        case(m, "huge id", raw='{"name": "H", "description": "", "document_set_ids": [9223372036854775808], "tool_ids": [], '
                               '"system_prompt": "", "task_prompt": "", "datetime_aware": false}')
        case(m, "not an object", body=["H"])
        case(m, "empty body", raw=b"")
        case(m, "null body", raw="null")
        case(m, "bad json", raw='{"name": "H",}')
    case("personaUpdate", "path abc", path={"persona_id": "abc"}, body=good_persona)
    case("personaUpdate", "path huge", path={"persona_id": big}, body={})
    case("personaGet", "valid", path={"persona_id": "12"})
    case("personaGet", "path abc", path={"persona_id": "abc"})
    case("personaGet", "path float", path={"persona_id": "1.5"})
    case("personaGet", "path huge", path={"persona_id": big})
    case("personasQuery", "none", query="")
    case("personasQuery", "ids", query="persona_ids=1&persona_ids=2&include_deleted=true")
    case("personasQuery", "bad ids", query="persona_ids=1&persona_ids=x&persona_ids=1.5&include_deleted=perhaps")
    case("personasQuery", "huge id", query="persona_ids=" + big)
    case("adminPersonasQuery", "none", query="")
    case("adminPersonasQuery", "both", query="include_deleted=1&get_editable=off")
    case("adminPersonasQuery", "bad", query="include_deleted=x&get_editable=maybe")
    for m in ["agentsQuery", "adminAgentsQuery"]:
        case(m, "none", query="")
        case(m, "every one", query="page_num=2&page_size=1000&include_deleted=true&get_editable=yes&include_default=false")
        case(m, "out of range", query="page_num=-1&page_size=0")
        case(m, "too big", query="page_size=1001&page_num=" + big)
        case(m, "bad", query="page_num=x&page_size=1.5&include_deleted=x&get_editable=2&include_default=none")
    for m, field in [("personaListed", "is_listed"), ("personaFeatured", "is_featured"), ("personaPublic", "is_public")]:
        case(m, "valid", body={field: True})
        case(m, "lax", body={field: "off"})
        case(m, "missing", body={})
        case(m, "null", body={field: None})
        case(m, "bad", body={field: "perhaps"})
        case(m, "path abc", path={"persona_id": "abc"}, body={field: True})
        case(m, "empty body", raw=b"")
        case(m, "not an object", body=[True])
    case("displayPriorities", "valid", body={"display_priority_map": {"1": 0, "2": 5}})
    case("displayPriorities", "lax", body={"display_priority_map": {" 3 ": "4", "4": 2.0}})
    case("displayPriorities", "bad keys", body={"display_priority_map": {"x": 1, "1.5": 2, "": 3}})
    case("displayPriorities", "bad values", body={"display_priority_map": {"1": "x", "2": None, "3": 1.5}})
    case("displayPriorities", "huge key", body={"display_priority_map": {big: 1}})
    case("displayPriorities", "not a map", body={"display_priority_map": [1, 2]})
    case("displayPriorities", "missing", body={})
    case("displayPriorities", "empty body", raw=b"")
    case("personaLabelCreate", "valid", body={"name": "Sales"})
    case("personaLabelCreate", "missing", body={})
    case("personaLabelCreate", "wrong type", body={"name": 5})
    case("personaLabelCreate", "null body", raw="null")
    case("personaLabelPatch", "valid", body={"label_name": "Sales"})
    case("personaLabelPatch", "missing", body={"name": "Sales"})
    case("personaLabelPatch", "wrong type", body={"label_name": ["Sales"]})
    case("personaLabelPatch", "path abc", path={"label_id": "abc"}, body={"label_name": "Sales"})
    case("personaLabelPatch", "empty body", raw=b"")
    case("personaLabelDelete", "valid", path={"label_id": "3"})
    case("personaLabelDelete", "path abc", path={"label_id": "abc"})
    case("personaLabelDelete", "path huge", path={"label_id": big})
    case("personaShare", "valid ids", body={"user_ids": [member], "group_ids": [1], "is_public": False, "label_ids": []})
    case("personaShare", "valid shares", body={"user_shares": [{"user_id": member, "permission": "EDITOR"}],
                                               "group_shares": [{"group_id": "2", "permission": "VIEWER"}],
                                               "public_permission": "VIEWER"})
    case("personaShare", "empty", body={})
    case("personaShare", "both users", body={"user_ids": [member], "user_shares": []})
    case("personaShare", "both groups", body={"group_ids": [], "group_shares": [{"group_id": 1, "permission": "EDITOR"}]})
    case("personaShare", "both twice", body={"user_ids": [], "user_shares": [], "group_ids": [], "group_shares": []})
    case("personaShare", "both but null", body={"user_ids": None, "user_shares": [], "group_ids": [1], "group_shares": None})
    case("personaShare", "bad levels", body={"user_shares": [{"user_id": member, "permission": "OWNER"}, {"user_id": "x"}],
                                             "group_shares": [{"group_id": "g", "permission": "editor"}],
                                             "public_permission": "ADMIN"})
    case("personaShare", "bad and both", body={"user_ids": ["x"], "user_shares": []})
    case("personaShare", "wrong types", body={"user_ids": member, "group_ids": 1, "is_public": "maybe", "label_ids": {}})
    case("personaShare", "too many", body={"group_ids": list(range(1001))})
    case("personaShare", "path abc", path={"persona_id": "abc"}, body={})
    case("personaShare", "empty body", raw=b"")
    case("personaTransfer", "to a person", body={"new_owner_user_id": member})
    case("personaTransfer", "to a group", body={"new_owner_group_id": "3"})
    case("personaTransfer", "empty", body={})
    case("personaTransfer", "bad", body={"new_owner_user_id": "someone", "new_owner_group_id": "g"})
    case("personaTransfer", "path abc", path={"persona_id": "abc"}, body={"new_owner_group_id": 1})
    case("personaTransfer", "empty body", raw=b"")

    # MCP servers (Onyx's models).
    case("mcpServerSetup", "valid no auth", body={"name": "docs", "server_url": "https://mcp.example.com/mcp",
                                                  "auth_type": "NONE", "auth_performer": "ADMIN", "transport": "STREAMABLE_HTTP"})
    case("mcpServerSetup", "valid template", body={
        "name": "tickets", "description": None, "server_url": "https://mcp.example.com/mcp", "auth_type": "API_TOKEN",
        "auth_performer": "PER_USER", "auth_template": {"headers": {"Authorization": "Bearer {api_key}", "X-User": "{user_email}"}},
        "auth_template_headers_changed": {"Authorization": "yes"}, "admin_credentials": {"api_key": "k"},
        "existing_server_id": "12", "groups": [], "users": []})
    case("mcpServerSetup", "missing fields", body={"name": "x"})
    case("mcpServerSetup", "bad enums", body={"name": "x", "server_url": "u", "auth_type": "api_token",
                                              "auth_performer": "admin", "transport": "stdio", "oauth_provider_mode": "auto"})
    case("mcpServerSetup", "bad dicts", body={"name": "x", "server_url": "u", "auth_type": "NONE", "auth_performer": "ADMIN",
                                              "auth_template": {"headers": {"A": 1, "B": None}, "required_fields": "api_key"},
                                              "admin_credentials": ["k"], "auth_template_headers_changed": {"A": "maybe"},
                                              "oauth_additional_auth_params": {"p": True}})
    case("mcpServerSetup", "template not an object", body={"name": "x", "server_url": "u", "auth_type": "NONE",
                                                            "auth_performer": "ADMIN", "auth_template": "Bearer"})
    case("mcpServerSetup", "duplicate keys", raw='{"name":"x","server_url":"u","auth_type":"NONE","auth_performer":"ADMIN",'
                                                '"admin_credentials":{"a":1,"a":"ok","b":2}}')
    case("mcpServerSetup", "not an object", body=[1])
    case("mcpServerUpdate", "valid", body={"server_id": 3, "selected_tools": ["echo", "add"]})
    case("mcpServerUpdate", "bad", body={"server_id": "three", "selected_tools": "echo", "name": 1})
    case("mcpServerCreate", "valid", body={"name": "docs", "server_url": "https://mcp.example.com/mcp"})
    case("mcpServerCreate", "bad", body={"name": None, "is_public": "maybe", "groups": ["g"]})
    case("mcpServerPatch", "valid", body={"name": "docs", "tool_policies": {"echo": "ALWAYS"}})
    case("mcpServerPatch", "bad", body={"tool_policies": [], "available_in_craft": "x"}, path={"server_id": "s"})
    case("mcpOAuthConnect", "valid", body={"server_id": 2, "return_path": "/", "include_resource_param": True})
    case("mcpOAuthConnect", "missing", body={"server_id": 2})
    case("mcpOAuthCallbackQuery", "valid", query="code=c&state=s")
    case("mcpOAuthCallbackQuery", "none", query="")
    case("mcpUserCredentials", "valid", body={"server_id": 2, "credentials": {"api_key": "k"}, "transport": "streamable-http"})
    case("mcpUserCredentials", "bad", body={"server_id": 2, "credentials": {"api_key": 5}, "transport": None})
    case("mcpStatusQuery", "valid", query="status=CONNECTED")
    case("mcpStatusQuery", "bad", query="status=connected", path={"server_id": "x"})
    case("mcpStatusQuery", "missing", query="")
    case("mcpSnapshotsQuery", "default", query="")
    case("mcpSnapshotsQuery", "bad", query="source=both")
    # statusQuery.
    case("statusQuery", "no params", query="")
    case("statusQuery", "valid lists", query="source=web&source=slack&access_type=public")
    case("statusQuery", "bad source", query="source=web&source=nope&source=Slack")
    case("statusQuery", "bad both", query="access_type=&source=x")
    case("statusQuery", "encoded", query="source=google%5Fdrive&access_type=p%75blic&x=1")
    case("statusQuery", "plus and percent", query="source=a+b&source=%ZZ&source=%C3%A9")
    case("statusQuery", "bad utf8 escape", query="source=%C3&source=%E2%82")
    case("statusQuery", "no equals", query="source&access_type")
    case("statusQuery", "semicolon", query="source=web;access_type=public")
    case("statusQuery", "sources at the maximum", query="&".join(["source=web"] * 100))
    case("statusQuery", "sources past the maximum", query="&".join(["source=web"] * 100 + ["source=nope"]))
    # auditQuery.
    case("auditQuery", "no params", query="")
    case("auditQuery", "valid", query="resource_type=tool&resource_id=5&limit=10")
    case("auditQuery", "limit zero", query="limit=0")
    case("auditQuery", "limit too big", query="limit=1001")
    case("auditQuery", "limit abc", query="limit=abc")
    case("auditQuery", "limit empty", query="limit=")
    case("auditQuery", "limit last wins", query="limit=abc&limit=5")
    case("auditQuery", "limit float", query="limit=10.0")
    case("auditQuery", "limit huge", query="limit=" + big)
    case("auditQuery", "limit negative", query="limit=-5")
    case("auditQuery", "limit spaces", query="limit=+%2050%20")
    case("auditQuery", "empty strings", query="resource_type=&resource_id=")
    case("auditQuery", "unicode values", query="resource_type=%C3%A9t%C3%A9&resource_id=a+b")
    case("auditQuery", "every filter", query="actor=Ann%40Example.com&action=credential.update&since=2026-01-02T03:04:05Z&until=2026-01-03&before_id=40&offset=20&limit=20")
    case("auditQuery", "since not a time", query="since=yesterday")
    case("auditQuery", "until empty", query="until=")
    case("auditQuery", "since without zone", query="since=2026-01-02T03:04:05")
    case("auditQuery", "since unix seconds", query="since=1767225600")
    case("auditQuery", "before_id zero", query="before_id=0")
    case("auditQuery", "before_id abc", query="before_id=abc")
    case("auditQuery", "before_id huge", query="before_id=" + big)
    case("auditQuery", "offset negative", query="offset=-1")
    case("auditQuery", "offset too big", query="offset=1000001")
    case("auditQuery", "offset float", query="offset=1.5")
    case("auditQuery", "actor and action empty", query="actor=&action=")
    # register.
    case("register", "valid", body={"email": "a@example.com", "password": "correct horse battery"})
    case("register", "onyx client body", body={"email": "a@example.com", "username": "a@example.com",
                                                "password": "TestPassword123!", "role": "admin", "is_superuser": True})
    case("register", "with an invitation token", body={"email": "a@example.com", "password": "correct horse battery",
                                                       "invitation_token": "qri_x"})
    case("register", "invitation token not a string", body={"email": "a@example.com", "password": "correct horse battery",
                                                            "invitation_token": 7})
    case("register", "missing both", body={})
    case("register", "wrong types", body={"email": ["a"], "password": 123456789012, "name": 5})
    case("register", "null body", raw="null")
    case("register", "form instead of json", raw="email=a%40example.com&password=x",
         ct="application/x-www-form-urlencoded")
    # login (a form).
    F = "application/x-www-form-urlencoded"
    case("login", "valid", raw="username=a%40example.com&password=correct+horse", ct=F)
    case("login", "valid with grant type and scope", raw="grant_type=password&username=a&password=b&scope=x+y", ct=F)
    case("login", "empty body", raw="", ct=F)
    case("login", "no password", raw="username=a%40example.com", ct=F)
    case("login", "empty password", raw="username=a%40example.com&password=", ct=F)
    case("login", "json body", body={"username": "a@example.com", "password": "x"})
    case("login", "no content type", raw="username=a&password=b", ct=None)
    case("login", "text/plain", raw="username=a&password=b", ct="text/plain")
    case("login", "form with charset, any case", raw="username=a&password=b",
         ct=" Application/X-WWW-Form-URLEncoded; charset=utf-8")
    case("login", "wrong grant type", raw="grant_type=client_credentials&username=a&password=b", ct=F)
    case("login", "empty grant type", raw="grant_type=&username=a&password=b", ct=F)
    case("login", "last value counts", raw="username=first&username=&password=b&password=c", ct=F)
    case("login", "escapes", raw="username=%C3%A9l%C3%A8ve%2Btag%40example.com&password=p%26ss+word%3D", ct=F)
    case("login", "latin-1 bytes", raw=b"username=\xe9&password=\xff\xfe", ct=F)
    case("login", "bad escapes", raw="username=%ZZ%4&password=%C3", ct=F)
    case("login", "semicolons", raw="username=a;password=b", ct=F)
    case("login", "semicolon before an ampersand", raw="username=a;x=1&password=b", ct=F)
    case("login", "separators and no equals", raw="&&;username&password=b;", ct=F)
    case("login", "extra fields", raw="username=a&password=b&client_id=c&client_secret=d&remember=1", ct=F)
    # setUserRole, userEmail, inviteUsers.
    case("setUserRole", "valid", body={"user_email": "a@example.com", "new_role": "global_curator"})
    case("setUserRole", "bad role", body={"user_email": "a@example.com", "new_role": "owner", "explicit_override": "maybe"})
    case("setUserRole", "missing", body={"explicit_override": "yes"})
    case("userEmail", "valid", body={"user_email": "a@example.com"})
    case("userEmail", "wrong type", body={"user_email": 5})
    case("userEmail", "missing", body={"email": "a@example.com"})
    case("changePassword", "valid", body={"current_password": "old one", "new_password": "new one"})
    case("changePassword", "missing new", body={"current_password": "old one"})
    case("changePassword", "numbers", body={"current_password": 1234, "new_password": None})
    case("inviteUsers", "valid", body={"emails": ["a@example.com", "b@example.com"]})
    case("inviteUsers", "not a list", body={"emails": "a@example.com"})
    case("inviteUsers", "bad items", body={"emails": ["a@example.com", 5, None]})
    # usersQuery, sessionsQuery.
    case("usersQuery", "no params", query="")
    case("usersQuery", "all valid", query="q=ann&page_num=2&page_size=50&roles=admin&roles=basic&is_active=true&status=live")
    case("usersQuery", "onyx client", query="page=1&page_size=10&q=test&roles=basic&status=deactivated")
    case("usersQuery", "out of bounds", query="page_num=-1&page=0&page_size=1001")
    case("usersQuery", "bad values", query="page_size=abc&roles=owner&is_active=maybe&status=gone")
    case("usersQuery", "empty values", query="q=&page=&is_active=&status=")
    case("usersQuery", "roles past the maximum", query="&".join(["roles=basic"] * 101))
    case("sessionsQuery", "valid", query="user_email=a%40example.com")
    case("sessionsQuery", "none", query="")
    # setPermission: Onyx's SetPermissionRequest.
    case("setPermission", "valid", body={"permission": "manage:connectors", "enabled": "yes"})
    case("setPermission", "missing", body={})
    case("setPermission", "unknown token", body={"permission": "manage:everything", "enabled": True})
    case("setPermission", "Onyx's member name", body={"permission": "MANAGE_CONNECTORS", "enabled": False})
    case("setPermission", "nulls", body={"permission": None, "enabled": None}, path={"group_id": "g"})
    case("setPermission", "not a token", body={"permission": 3, "enabled": "maybe"})
    # Indexing: run-once, a pair's attempts and errors, and the worker
    # protocol.
    case("runConnectorRequest", "valid", body={"connector_id": 1, "credential_ids": [2], "from_beginning": True})
    case("runConnectorRequest", "missing connector", body={})
    case("runConnectorRequest", "null credentials", body={"connector_id": 1, "credential_ids": None})
    case("runConnectorRequest", "bad credentials", body={"connector_id": "x", "credential_ids": ["a", 1.5, None], "from_beginning": "maybe"})
    case("runConnectorRequest", "credentials not a list", body={"connector_id": 1, "credential_ids": 3})
    case("runConnectorRequest", "credentials past the maximum", body={"connector_id": 1, "credential_ids": [2] * 1001})
    case("indexAttemptsQuery", "defaults", path={"cc_pair_id": "1"})
    case("indexAttemptsQuery", "bounds", path={"cc_pair_id": "1"}, query="page_num=-1&page_size=1001")
    case("indexAttemptsQuery", "a page past the last", path={"cc_pair_id": "1"}, query="page_num=4611686018427387905&page_size=2")
    case("indexAttemptsQuery", "not numbers", path={"cc_pair_id": "x"}, query="page_num=a&page_size=1.5")
    case("pairDocumentsQuery", "defaults", path={"cc_pair_id": "1"})
    case("pairDocumentsQuery", "bounds", path={"cc_pair_id": "1"}, query="page_num=-1&page_size=1001")
    case("pairDocumentsQuery", "not numbers", path={"cc_pair_id": "x"}, query="page_num=a&page_size=1.5")
    case("attemptErrorsQuery", "bounds", path={"cc_pair_id": "1"}, query="page_size=101&include_resolved=maybe")
    case("attemptErrorsQuery", "valid", path={"cc_pair_id": "1"}, query="include_resolved=true&page_num=2&page_size=100")
    case("workerRegistration", "missing name", body={})
    case("workerRegistration", "name not text", body={"name": 5})
    case("workerRegistrationCreate", "valid", body={"name": "fleet", "hours": 2})
    case("workerRegistrationCreate", "hours out of bounds", body={"name": "fleet", "hours": 0})
    case("workerRegistrationCreate", "hours too many", body={"name": "fleet", "hours": 721})
    case("workerRegistrationCreate", "hours not a number", body={"name": None, "hours": "two"})
    case("heartbeat", "empty", body={})
    case("heartbeat", "bad ids", body={"attempt_ids": [1, "x", None]})
    # Every list has a maximum: at it, and one past it (pydantic counts the
    # items of a list before it validates them).
    case("heartbeat", "ids at the maximum", body={"attempt_ids": list(range(1, 129))})
    case("heartbeat", "ids past the maximum", body={"attempt_ids": list(range(1, 130))})
    case("heartbeat", "bad ids past the maximum", body={"attempt_ids": ["x"] * 129})
    case("attemptFinish", "valid", body={"status": "success"}, path={"attempt_id": "1"})
    case("attemptFinish", "bad status", body={"status": "done", "error_msg": 5}, path={"attempt_id": "1"})
    case("attemptFinish", "missing", body={}, path={"attempt_id": "x"})
    case("attemptFinish", "with a reason", body={"status": "failed", "reason": "credential_refused"}, path={"attempt_id": "1"})
    case("attemptFinish", "a reason the worker cannot give", body={"status": "failed", "reason": "lease_expired"}, path={"attempt_id": "1"})
    case("progressReport", "empty", body={}, path={"attempt_id": "1"})
    case("progressReport", "not lists", body={"documents": {}, "failures": "x", "checkpoint": []}, path={"attempt_id": "1"})
    case("progressReport", "items not objects", body={"documents": [1, {"id": "a"}], "failures": [None]}, path={"attempt_id": "1"})
    case("progressReport", "listed ids", body={"document_ids": ["a", "b"]}, path={"attempt_id": "1"})
    case("progressReport", "listed ids not strings", body={"document_ids": [1, None, "a"]}, path={"attempt_id": "1"})
    case("progressReport", "access and groups", body={"access": [{"document_id": "a"}], "groups": [{"id": "g", "user_emails": []}]},
         path={"attempt_id": "1"})
    case("progressReport", "access and groups not objects", body={"access": [1], "groups": "x"}, path={"attempt_id": "1"})
    case("progressReport", "lists at the maximum", body={"documents": [{}] * 1000, "failures": [{}] * 1000,
                                                          "document_ids": ["d"] * 1000}, path={"attempt_id": "1"})
    case("progressReport", "lists past the maximum", body={"documents": [{}] * 1001, "failures": [1] * 1001,
                                                            "document_ids": ["d"] * 1001}, path={"attempt_id": "1"})
    case("attemptCredentialUpdate", "missing", body={}, path={"attempt_id": "1"})
    case("attemptCredentialUpdate", "not an object", body={"credential_json": [1], "version": "v"}, path={"attempt_id": "1"})

    # ingestionDocument: Onyx's IngestionDocument.
    doc = {"id": "d", "sections": [{"text": "t", "link": None}], "semantic_identifier": "s", "metadata": {"a": 1}}
    case("ingestionDocument", "valid", body={"document": doc, "cc_pair_id": 3})
    case("ingestionDocument", "missing", body={})
    case("ingestionDocument", "empty document", body={"document": {}})
    case("ingestionDocument", "document not an object", body={"document": [doc]})
    case("ingestionDocument", "bad fields", body={"document": {**doc, "sections": "x", "metadata": [], "source": "nope",
                                                           "doc_updated_at": "yesterday", "primary_owners": [1]}, "cc_pair_id": "x"})
    case("ingestionDocument", "null semantic identifier", body={"document": {**doc, "semantic_identifier": None}})
    case("ingestionDocument", "external access", body={"document": {**doc, "external_access": {
        "external_user_emails": ["a@example.com", "a@example.com"], "external_user_group_ids": [], "is_public": "yes"}}})
    case("ingestionDocument", "external access null", body={"document": {**doc, "external_access": None}})
    case("ingestionDocument", "external access not an object", body={"document": {**doc, "external_access": ["a@example.com"]}})
    case("ingestionDocument", "external access empty", body={"document": {**doc, "external_access": {}}})
    # A set counts the distinct items it keeps: duplicates past the
    # maximum are kept once; a distinct one past it is too long.
    case("ingestionDocument", "external access at the maximum", body={"document": {**doc, "external_access": {
        "external_user_emails": ["u%d" % i for i in range(10000)] + ["u0"], "external_user_group_ids": [], "is_public": False}}})
    case("ingestionDocument", "external access past the maximum", body={"document": {**doc, "external_access": {
        "external_user_emails": [1] + ["u%d" % i for i in range(10001)], "external_user_group_ids": [], "is_public": False}}})
    case("ingestionDocument", "external access bad item under the maximum", body={"document": {**doc, "external_access": {
        "external_user_emails": ["a", 2, "a"], "external_user_group_ids": [], "is_public": False}}})
    case("ingestionDocument", "external access bad fields", body={"document": {**doc, "external_access": {
        "external_user_emails": "a@example.com", "external_user_group_ids": [1, None, "g"], "is_public": "maybe"}}})

    # sendSearchQuery: Onyx's SendSearchQueryRequest.
    case("sendSearchQuery", "valid", body={"search_query": "q", "filters": {"source_type": ["web"], "tags": [{"tag_key": "a", "tag_value": "b"}],
                                                                              "updated_at_range": {"start": "2026-01-01", "end": None}}})
    case("sendSearchQuery", "missing", body={})
    case("sendSearchQuery", "wrong types", body={"search_query": 5, "filters": [], "num_hits": "many", "hybrid_alpha": "half",
                                                 "include_content": "maybe", "stream": [], "num_docs_fed_to_llm_selection": 1.5})
    case("sendSearchQuery", "lax floats", body={"search_query": "q", "hybrid_alpha": " 0.5 "})
    case("sendSearchQuery", "float of a bool and an object", body={"search_query": "q", "hybrid_alpha": {}})
    case("sendSearchQuery", "floats", body={"search_query": "q", "hybrid_alpha": True})
    case("sendSearchQuery", "bad filters", body={"search_query": "q", "filters": {"source_type": ["nope"], "document_set": "x",
                                                 "created_at_range": {"start": "yesterday"}, "updated_at_range": 3,
                                                 "tags": [{"tag_key": "a"}, 1], "time_cutoff": "soon"}})

    # searchRequest: Onyx v4.6.1's SearchRequest (POST /search).
    case("searchRequest", "onyx's test", body={"query": "search api integration test unique document"})
    case("searchRequest", "every field", body={"query": "q", "sources": ["web", "file"], "document_sets": ["d"],
                                               "tags": [{"tag_key": "a", "tag_value": "b"}], "time_cutoff": "2026-01-01T00:00:00",
                                               "persona_id": "7", "provider": "openai", "model": "gpt", "skip_query_expansion": "yes",
                                               "message_history": [{"message": "hi", "message_type": "user"}]})
    case("searchRequest", "missing", body={})
    case("searchRequest", "empty query", body={"query": ""})
    case("searchRequest", "long query", body={"query": "x" * 2049})
    case("searchRequest", "longest query", body={"query": "é" * 2048})
    case("searchRequest", "model without provider", body={"query": "q", "model": "gpt"})
    case("searchRequest", "provider without model", body={"query": "q", "provider": "openai", "model": None})
    case("searchRequest", "empty provider and model", body={"query": "q", "provider": "", "model": ""})
    case("searchRequest", "empty provider", body={"query": "q", "provider": "", "model": "gpt"})
    case("searchRequest", "a field error and no provider", body={"query": "", "model": "gpt"})
    case("searchRequest", "wrong types", body={"query": 5, "sources": "web", "document_sets": [1], "tags": [{"tag_key": "a"}],
                                               "time_cutoff": "soon", "persona_id": 1.5, "provider": 3, "model": [],
                                               "skip_query_expansion": "maybe",
                                               "message_history": [{"message": "m", "message_type": "robot"}, 2]})
    case("searchRequest", "null body", raw="null")

    # indexingStatus: Onyx's IndexingStatusRequest.
    case("indexingStatus", "onyx's managers", body={"get_all_connectors": True})
    case("indexingStatus", "empty", body={})
    case("indexingStatus", "every filter", body={
        "secondary_index": "false", "source": "web", "access_type_filters": ["public", "private"],
        "last_status_filters": ["success"], "docs_count_operator": ">", "docs_count_value": "3",
        "name_filter": "wiki", "source_to_page": {"web": 2, "slack": "3"}, "get_all_connectors": 0})
    case("indexingStatus", "bad enums", body={
        "source": "Web", "access_type_filters": ["open"], "last_status_filters": ["done", None],
        "docs_count_operator": ">=", "docs_count_value": 1.5})
    case("indexingStatus", "bad source_to_page", body={"source_to_page": {"web": "x", "nowhere": 1, "slack": 2.5}})
    case("indexingStatus", "source_to_page not a dict", body={"source_to_page": [["web", 1]]})
    case("indexingStatus", "source_to_page duplicate keys", raw='{"source_to_page": {"web": "x", "slack": 1, "web": 2, "bad": 1, "bad": "y"}}')
    case("indexingStatus", "source_to_page null", body={"source_to_page": None, "access_type_filters": None})
    case("indexingStatus", "source_to_page huge", raw='{"source_to_page": {"web": 99999999999999999999}}')
    case("indexingStatus", "no body", raw=b"")
    # groupsQuery, allUsersQuery.
    case("groupsQuery", "none", query="")
    case("groupsQuery", "include_default", query="include_default=true")
    case("groupsQuery", "as Python prints it", query="include_default=True")
    case("groupsQuery", "bad", query="include_default=maybe")
    case("uploadFilesQuery", "none", query="")
    case("uploadFilesQuery", "unzip false", query="unzip=false")
    case("uploadFilesQuery", "unzip as Python prints it", query="unzip=False")
    case("uploadFilesQuery", "bad", query="unzip=maybe")
    # uploadFiles: the multipart files of the upload, or their absence.
    M = "multipart/form-data; boundary=QuarryBoundary"
    def parts(*ps):
        out = ""
        for name, filename, text in ps:
            fn = '; filename="%s"' % filename if filename else ""
            out += '--QuarryBoundary\r\nContent-Disposition: form-data; name="%s"%s\r\n\r\n%s\r\n' % (name, fn, text)
        return out + "--QuarryBoundary--\r\n"
    case("uploadFiles", "files", raw=parts(("files", "a.txt", "alpha")), ct=M)
    case("uploadFiles", "no body", raw=b"", ct=None)
    case("uploadFiles", "a JSON body", body={"files": ["a.txt"]})
    case("uploadFiles", "no files part", raw=parts(("other", "a.txt", "alpha"), ("unzip", None, "false")), ct=M)
    case("uploadFiles", "no parts", raw="--QuarryBoundary--\r\n", ct=M)
    case("uploadFiles", "no files part and a bad query", raw=parts(("other", None, "x")), ct=M, query="unzip=maybe")
    # updateFiles: the path of a change of a file connector's files.
    case("updateFiles", "files", raw=parts(("files", "a.txt", "alpha"), ("file_ids_to_remove", None, '["x"]')), ct=M)
    case("updateFiles", "no body", raw=b"", ct=None)
    case("updateFiles", "a JSON body", body={"file_ids_to_remove": ["x"]})
    case("updateFiles", "a bad connector id", path={"connector_id": "abc"}, raw=parts(("files", "a.txt", "alpha")), ct=M)
    case("updateFiles", "a float connector id", path={"connector_id": "1.5"}, raw=b"", ct=None)
    case("updateFiles", "a huge connector id", path={"connector_id": "99999999999999999999"}, raw=b"", ct=None)
    case("connectorsQuery", "none", query="")
    case("connectorsQuery", "a credential", query="credential=7")
    case("connectorsQuery", "not a number", query="credential=k")
    case("connectorsQuery", "a float", query="credential=1.5")
    case("connectorsQuery", "empty", query="credential=")
    case("connectorsQuery", "too large", query="credential=9223372036854775808")
    case("allUsersQuery", "none", query="")
    case("allUsersQuery", "onyx's test", query="include_api_keys=true")
    case("allUsersQuery", "pages", query="q=ann&accepted_page=0&slack_users_page=0&invited_page=1&include_api_keys=false")
    case("allUsersQuery", "bad", query="accepted_page=-1&slack_users_page=x&invited_page=1.5&include_api_keys=maybe")
    # scimTokenCreate.
    case("scimTokenCreate", "valid", body={"name": "Okta"})
    case("scimTokenCreate", "missing name", body={})
    case("scimTokenCreate", "name not a string", body={"name": 7})
    case("scimTokenCreate", "null name", body={"name": None})
    case("scimTokenCreate", "null body", raw="null")
    # Document sets.
    user = "6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
    good_set = {"name": "HR", "description": "HR's documents", "cc_pair_ids": [1, 2], "is_public": False, "users": [user],
                "groups": [3], "federated_connectors": []}
    case("documentSetCreate", "valid", body=good_set)
    case("documentSetCreate", "valid minimal", body={"name": "HR", "description": "", "cc_pair_ids": [], "is_public": True})
    case("documentSetCreate", "lax values", body={"name": "HR", "description": "d", "cc_pair_ids": ["1", 2.0], "is_public": "yes",
                                                   "users": [user.upper(), user.replace("-", ""), "urn:uuid:" + user], "groups": ["7"],
                                                   "federated_connectors": [{"federated_connector_id": "4", "entities": {"a": [1]}}]})
    case("documentSetCreate", "missing", body={})
    case("documentSetCreate", "missing some", body={"name": "HR", "is_public": True})
    case("documentSetCreate", "wrong types", body={"name": 1, "description": None, "cc_pair_ids": "1", "is_public": "maybe",
                                                    "users": user, "groups": {}, "federated_connectors": {}})
    case("documentSetCreate", "bad items", body={"name": "HR", "description": "d", "cc_pair_ids": [1, "x", None, 1.5, True],
                                                  "is_public": False, "users": ["not-a-uuid", 7, None, "6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4"],
                                                  "groups": [None, "g"]})
    case("documentSetCreate", "bad federated connectors", body=dict(good_set, federated_connectors=[
        {}, {"federated_connector_id": "x", "entities": []}, 5, {"federated_connector_id": 1, "entities": None}]))
    case("documentSetCreate", "nulls", body={"name": "HR", "description": "d", "cc_pair_ids": None, "is_public": None,
                                              "users": None, "groups": None, "federated_connectors": None})
    case("documentSetCreate", "too many groups", body=dict(good_set, groups=list(range(1001))))
    case("documentSetCreate", "too many federated connectors", body=dict(good_set, federated_connectors=[
        {"federated_connector_id": i, "entities": {}} for i in range(101)]))
    case("documentSetCreate", "huge pair id", raw='{"name": "HR", "description": "d", "cc_pair_ids": [9223372036854775808], "is_public": true}')
    case("documentSetCreate", "not an object", body=["HR"])
    case("documentSetCreate", "empty body", raw=b"")
    case("documentSetCreate", "null body", raw="null")
    case("documentSetUpdate", "valid", body=dict(good_set, id=4))
    case("documentSetUpdate", "valid without federated connectors", body={"id": "4", "name": "HR", "description": "d",
                                                                            "cc_pair_ids": [1], "is_public": True, "users": [], "groups": []})
    case("documentSetUpdate", "as a creation", body={"name": "HR", "description": "d", "cc_pair_ids": [1], "is_public": True})
    case("documentSetUpdate", "bad id", body=dict(good_set, id="four"))
    case("documentSetUpdate", "float id", body=dict(good_set, id=4.5))
    case("documentSetUpdate", "null lists", body=dict(good_set, id=4, users=None, groups=None))
    case("documentSetUpdate", "empty body", raw=b"")
    case("documentSetDelete", "valid", path={"document_set_id": "12"})
    case("documentSetDelete", "path abc", path={"document_set_id": "abc"})
    case("documentSetDelete", "path float", path={"document_set_id": "1.5"})
    case("documentSetDelete", "path huge", path={"document_set_id": big})
    case("documentSetsQuery", "none", query="")
    case("documentSetsQuery", "editable", query="get_editable=true")
    case("documentSetsQuery", "editable on", query="get_editable=on")
    case("documentSetsQuery", "editable bad", query="get_editable=perhaps")
    case("documentSetsQuery", "editable twice", query="get_editable=false&get_editable=1")
    case("documentSetPublic", "valid", body={"document_set_ids": [1, 2]})
    case("documentSetPublic", "empty list", body={"document_set_ids": []})
    case("documentSetPublic", "missing", body={})
    case("documentSetPublic", "not a list", body={"document_set_ids": 1})
    case("documentSetPublic", "bad items", body={"document_set_ids": ["a", None, 2.5]})
    case("documentSetPublic", "too many", body={"document_set_ids": list(range(1001))})
    case("documentSetPublic", "no body", raw=b"")
    case("documentSetPublic", "null body", raw="null")
    case("documentSetPublic", "bad json", raw='{"document_set_ids": [1,]}')


def write_requests():
    corpus()
    by_model = {}
    for c in CASES:
        status, response, decoded = handle(c["model"], c["path"], c["query"], c["ct"], c["body"])
        method, path, _, _, _ = ENDPOINTS[c["model"]]
        out = {"name": c["name"], "model": c["model"], "method": method, "path": path,
               "path_params": c["path"], "query": c["query"], "content_type": c["ct"]}
        try:
            out["body"] = c["body"].decode("utf-8")
        except UnicodeDecodeError:
            out["body_base64"] = base64.b64encode(c["body"]).decode()
        if len(c["body"]) > 2000:
            out.pop("body", None)
            out["body_base64"] = base64.b64encode(c["body"]).decode()
        out["status"] = status
        out["response"] = response
        if decoded is not None:
            out["decoded"] = {k: dump(v) for k, v in decoded.items()}
        by_model.setdefault(c["model"], []).append(out)
    total = 0
    for model, cases in by_model.items():
        write("requests_%s.json" % model, cases)
        total += len(cases)
    return total


# ---------------------------------------------------------------------------
# json.loads positions and messages.

JSON_TEXTS = [
    "", " ", "{", "[", '{"a"', '{"a":', '{"a":1', '{"a":1,', '{"a":1,}', "[1,]", "[1 2]", '{"a" 1}', "{a:1}",
    "{'a':1}", '"abc', '"a\\x"', '"\\u12"', '"\\u12G4"', '"a\tb"', '"a\nb"', "1 2", "01", "-", "-a", "1.", "1.e5",
    "1e", "1e+", ".5", "tru", "true x", "nan", "-Inf", '"\\', '"\\u', '"abc\\', '{"a":1}}', "[]]", "é{",
    '{"é":é}', '"é\x01"', '["é", x]', '{"a":1 "b":2}', "[1,,2]", "{,}", '{"a":1,,}', "nul", "null x", "[-]",
    "[1.5e]", "[0x10]", "[00]", "[-01]", '{"a":{"b":[1,2,{"c":}]}}', "  \n  ", "\x00", "[1]\x00", '"\x1f"',
    "[true,false,null,tr]", '{"a":1}\n\n x', '["\\/\\b\\f\\n\\r\\t\\"\\\\"] x', '"\\U0041"',
    '"\\u00e9\\uD83D\\uDE00" 1', '{"\\u00e9":1,}', '"日本語\\x"', '{"日本": [1, 2,, 3]}', '["😀😀", 1 2]',
    '"\\ud800\\uZZZZ"', '"\\ud800\\u12"', '"\\ud800\\', '"\\ud800\\u', '"ab\\u1234', "[" * 3 + "1" + "]" * 2,
    '{"a": "ü", "b": fals}', "\u00a0{}", "\u2028[]", '{"a":1}\u3000', "[1, 2, 3", '{"a": [}', "[-1.5e-3, -0, 1E+2]",
    "1e400", "-1e400", "NaN", "Infinity", "-Infinity", "[1, NaN]", '{"x": Infinity}',
    '{"a": 1, "b": 2, "a": 3}', '{"b": {"z": 1, "y": 2, "z": 3}, "a": [1.0, 1e16, 1e-5, 0.0001, 123456789.125]}',
    '"tab\\tnew\\nline\\u0001\\u007f"', '[1E2, 1e-7, 2.5E+10, 10000000000000000.0, 1234567890123456.0]',
    "[true, false, null]", '{"k": "日本語", "e": "\\u00e9"}', "[0, -0, -0.0, 0.0]", '"\\ud800"',
    "[" + "1" * 4300 + "]", "[" + "1" * 4301 + "]", "[-" + "1" * 4300 + "]",
    "{" + ", ".join('"k%d": %d' % (i % 23, i) for i in range(60)) + "}",
]


def write_json_errors():
    rows = []
    for text in JSON_TEXTS:
        row = {"text": text}
        try:
            obj = json.loads(text.encode("utf-8"))
            try:
                row["dumps"] = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                row["dumps"].encode("utf-8")
            except (ValueError, UnicodeError):
                row.pop("dumps", None)
                row["unrepresentable"] = True
        except json.JSONDecodeError as e:
            row["msg"], row["pos"] = e.msg, e.pos
        except (ValueError, RecursionError):
            row["fatal"] = True
        rows.append(row)
    write("json_errors.json", rows)
    return len(rows)


# ---------------------------------------------------------------------------
# Scalars: single values through lax validation.

SCALAR_TYPES = {"int": Int64, "bool": bool, "str": str, "datetime": datetime, "dict": dict[str, Any]}
SCALAR_STRINGS = [
    "0", "12", " 12 ", "+12", "-0", "1_000", "1__0", "_1", "1_", "0x10", "012", "00", "0_0", "0__1", "1.0", "1.00",
    "1.5", "1e3", "1.", ".0", "-.0", "0.", "00.", "-00.0", "+0.0", "1_0.0", "1.0_0", "abc", "", " ", "\t5\n",
    "\u00a012\u3000", "\x0b12", "\x1c12", "١٢", "+-1", "-+1", "--1", "1 2", "12\x00", "-", "+",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "1" * 4300, "1" * 4301, "-" + "1" * 4300, " " + "1" * 4301, "1" * 4301 + "x", "1" * 4300 + ".0",
    "0" * 30 + "1", "yes", "YES", "On", "oFf", "t", "F", "y", "N", "no", "true", "False", "2", "none", "01",
    "yeſ", "tRuE ", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05+02:00", "2024-01-02T03:04:05.1234567Z",
    "2024-01-02", "2024-01-02T03:04", "2024-01-02T03", "2024-01-02 03:04:05", "2024-01-02_03:04:05", "2024-13-02",
    "2024-02-30", "2023-02-29", "2024-02-29", "2000-02-29", "1900-02-29", "20240102", "2024/01/02", "2024",
    "2024-01", "2024-01-02T", "2024-01-02T24:00:00", "2024-01-02T23:60:00", "2024-01-02T23:59:60",
    "2024-01-02T03:04:05+0200", "2024-01-02T03:04:05+02", "2024-01-02T03:04:05 +02:00", "2024-01-02T03:04:05.Z",
    "2024-01-02T03:04:05,5Z", "2024-01-02T03:04:05+23:59", "2024-01-02T03:04:05+24:00",
    "2024-01-02T03:04:05-00:00", "2024-01-02T03:04:05+00:60", "2024-01-02T03:04:5", "2024-01-02T3:04:05",
    "2024-0a-02", "2024-01-0a", "2024-01x02", "20a4-01-02", "2024x01-02", "0000-01-01", "0001-01-01",
    "9999-12-31T23:59:59.999999", "0000-12-31T23:59:59+01:00", "1700000000", "1700000000.5", "1700000000.",
    "-1.5", ".5", "-.5", "+.5", "+1", "1.5.5", "1.5e3", "1.e5", "1.5e", "1e5", "-1", "99999999999",
    "20000000000", "20000000001", "-20000000001", "200000000000000.0", "100000000000000000.0",
    "99999999999999999", "-99999999999999999", "-99999999999999999.5", "20000000000000000000",
    "-62167219200000", "253402300799999", "253402300800000", "1111111111.111111111111111111111111111111",
    "0.0000005", "2024-01-02T03:04:05.000000Z", "2024-01-02T00:00:00.000001-23:59", "2024-01-02T03:04:05Zx",
    "2024-01-02T03:04:05+02:00Z", "２０２４-01-02", "2024-01-02T03:04:05\u221202:00", "2024-01-02T03:04:05\u2212",
]
SCALAR_JSON = [
    "0", "1", "2", "-1", "1.0", "0.0", "-0.0", "1.5", "0.5", "2.0", "1e20", "1e19", "9.2e18", "9.223372036854775e18",
    "9223372036854775807.0", "-9223372036854775808.0", "true", "false", "null", "[]", "{}", "[1]", '{"a": 1}',
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "99999999999999999999999", "-99999999999999999999999", "1700000000", "1700000000.5", "-1.25", "-1.75",
    "-20000000001.5", "-20000000001.25", "20000000001.25", "20000000000.5", "1e-7", "1.0000004", "1.9999999",
    "1234567890.1234567", "253402300799999.9", "253402300800000", "-62167219200000", "-62167219200001",
    "-62135596800000", "1e300", "-1e300", "2e14", "200000000000000",
]


def write_scalars():
    rows = []
    inputs = [json.dumps(s, ensure_ascii=False) for s in SCALAR_STRINGS] + SCALAR_JSON
    for name, tp in SCALAR_TYPES.items():
        ta = TypeAdapter(tp)
        for text in inputs:
            if len(text) > 100 and name != "int":
                continue  # the long digit strings are about integers
            row = {"type": name, "json": text}
            try:
                row["value"] = dump(ta.validate_python(json.loads(text), from_attributes=True))
            except ValidationError as e:
                row["errors"] = json.loads(json.dumps(jsonable(e.errors(include_url=False)), ensure_ascii=False))
            rows.append(row)
    write("scalars.json", rows)
    return len(rows)


def write(name, data):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    if not pydantic.VERSION.startswith("2."):
        sys.exit("pydantic 2 is required, found " + pydantic.VERSION)
    os.makedirs(OUT, exist_ok=True)
    n = write_requests()
    j = write_json_errors()
    s = write_scalars()
    print("pydantic %s: %d requests, %d JSON texts, %d scalars written to %s" % (pydantic.VERSION, n, j, s, OUT))


if __name__ == "__main__":
    main()
