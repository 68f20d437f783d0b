package onyxtest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

// The mirrors of Onyx's models that the replay parses every answer
// against (onyxParse): every field Onyx requires is there, with Onyx's
// name and type, and null only where Onyx allows it.

// onyxPassword is the password of Onyx's test users (DEFAULT_PASSWORD).
const onyxPassword = "TestPassword123!"

// onyxDefault tags the fields of the mirror models that have a default in
// Onyx's model, and so may be absent.
const onyxDefault = "default"

// onyxUUID is a UUID field: a string in the canonical 8-4-4-4-12 form.
type onyxUUID string

// UnmarshalJSON accepts a canonical UUID only.
func (u *onyxUUID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, c := range s {
		hyphen := i == 8 || i == 13 || i == 18 || i == 23
		if len(s) != 36 || hyphen != (c == '-') || !hyphen && !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return fmt.Errorf("%q is not a UUID", s)
		}
	}
	*u = onyxUUID(s)
	return nil
}

// onyxTime is a datetime field, as pydantic reads one from JSON.
type onyxTime struct{ time.Time }

// UnmarshalJSON accepts an RFC 3339 time.
func (t *onyxTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	t.Time = v
	return err
}

// onyxRole is Onyx's UserRole.
type onyxRole string

// EnumValues returns Onyx's roles.
func (onyxRole) EnumValues() []string {
	return []string{"limited", "basic", "admin", "curator", "global_curator", "slack_user", "ext_perm_user"}
}

// onyxCCPairStatus is Onyx's ConnectorCredentialPairStatus.
type onyxCCPairStatus string

// EnumValues returns Onyx's cc-pair statuses.
func (onyxCCPairStatus) EnumValues() []string {
	return []string{"SCHEDULED", "INITIAL_INDEXING", "ACTIVE", "PAUSED", "DELETING", "INVALID"}
}

// The mirrors of Onyx's models (backend/onyx/server/documents/models.py,
// backend/onyx/server/models.py, backend/onyx/server/manage/models.py,
// backend/ee/onyx/server/user_group/models.py,
// backend/onyx/server/features/tool/models.py, and the managers'
// test_models.py): a pointer is `X | None`.

// onyxConnectorSnapshot mirrors Onyx's ConnectorSnapshot.
type onyxConnectorSnapshot struct {
	Name                    string                `json:"name"`
	Source                  quarry.DocumentSource `json:"source"`
	InputType               quarry.InputType      `json:"input_type"`
	ConnectorSpecificConfig map[string]any        `json:"connector_specific_config"`
	RefreshFreq             *int64                `json:"refresh_freq" onyx:"default"`
	PruneFreq               *int64                `json:"prune_freq" onyx:"default"`
	IndexingStart           *onyxTime             `json:"indexing_start" onyx:"default"`
	ID                      int64                 `json:"id"`
	CredentialIDs           []int64               `json:"credential_ids"`
	TimeCreated             onyxTime              `json:"time_created"`
	TimeUpdated             onyxTime              `json:"time_updated"`
}

// onyxCredentialSnapshot mirrors Onyx's CredentialSnapshot.
type onyxCredentialSnapshot struct {
	CredentialJSON map[string]any        `json:"credential_json"`
	AdminPublic    bool                  `json:"admin_public"`
	Source         quarry.DocumentSource `json:"source"`
	Name           *string               `json:"name" onyx:"default"`
	CuratorPublic  bool                  `json:"curator_public" onyx:"default"`
	Groups         []int64               `json:"groups" onyx:"default"`
	IsUserFile     bool                  `json:"is_user_file" onyx:"default"`
	ID             int64                 `json:"id"`
	UserID         *onyxUUID             `json:"user_id"`
	UserEmail      *string               `json:"user_email" onyx:"default"`
	TimeCreated    onyxTime              `json:"time_created"`
	TimeUpdated    onyxTime              `json:"time_updated"`
}

// onyxConnectorStatus mirrors Onyx's ConnectorStatus, an entry of the status listing.
type onyxConnectorStatus struct {
	CCPairID   int64                  `json:"cc_pair_id"`
	Name       *string                `json:"name"`
	Connector  onyxConnectorSnapshot  `json:"connector"`
	Credential onyxCredentialSnapshot `json:"credential"`
	AccessType quarry.AccessType      `json:"access_type"`
	Groups     []int64                `json:"groups"`
}

// onyxDeletionAttemptSnapshot mirrors Onyx's DeletionAttemptSnapshot.
type onyxDeletionAttemptSnapshot struct {
	ConnectorID  int64  `json:"connector_id"`
	CredentialID int64  `json:"credential_id"`
	Status       string `json:"status"`
}

// onyxCCPairFullInfo mirrors Onyx's CCPairFullInfo, a cc-pair's page.
type onyxCCPairFullInfo struct {
	ID                          int64                        `json:"id"`
	Name                        string                       `json:"name"`
	Status                      onyxCCPairStatus             `json:"status"`
	InRepeatedErrorState        bool                         `json:"in_repeated_error_state"`
	NumDocsIndexed              int64                        `json:"num_docs_indexed"`
	Connector                   onyxConnectorSnapshot        `json:"connector"`
	Credential                  onyxCredentialSnapshot       `json:"credential"`
	NumberOfIndexAttempts       int64                        `json:"number_of_index_attempts"`
	LastIndexAttemptStatus      *string                      `json:"last_index_attempt_status"`
	LatestDeletionAttempt       *onyxDeletionAttemptSnapshot `json:"latest_deletion_attempt"`
	AccessType                  quarry.AccessType            `json:"access_type"`
	IsEditableForCurrentUser    bool                         `json:"is_editable_for_current_user"`
	DeletionFailureMessage      *string                      `json:"deletion_failure_message"`
	Indexing                    bool                         `json:"indexing"`
	Creator                     *onyxUUID                    `json:"creator"`
	CreatorEmail                *string                      `json:"creator_email"`
	LastIndexed                 *onyxTime                    `json:"last_indexed"`
	LastPruned                  *onyxTime                    `json:"last_pruned"`
	LastFullPermissionSync      *onyxTime                    `json:"last_full_permission_sync"`
	OverallIndexingSpeed        *float64                     `json:"overall_indexing_speed"`
	LatestCheckpointDescription *string                      `json:"latest_checkpoint_description"`
}

// onyxUserPreferences mirrors Onyx's UserPreferences.
type onyxUserPreferences struct {
	ChosenAssistants *[]int64 `json:"chosen_assistants" onyx:"default"`
	HiddenAssistants []int64  `json:"hidden_assistants" onyx:"default"`
	DefaultModel     *string  `json:"default_model" onyx:"default"`
}

// onyxUserInfo mirrors Onyx's UserInfo, a member of a group.
type onyxUserInfo struct {
	ID          string              `json:"id"`
	Email       string              `json:"email"`
	IsActive    bool                `json:"is_active"`
	IsSuperuser bool                `json:"is_superuser"`
	IsVerified  bool                `json:"is_verified"`
	Role        onyxRole            `json:"role"`
	Preferences onyxUserPreferences `json:"preferences"`
}

// onyxMe mirrors what UserManager reads of GET /me (a KeyError if is_active is missing).
type onyxMe struct {
	Role     onyxRole `json:"role"`
	IsActive bool     `json:"is_active"`
	ID       string   `json:"id"`
}

// onyxPairDescriptor mirrors Onyx's ConnectorCredentialPairDescriptor, a pair of a group.
type onyxPairDescriptor struct {
	ID         int64                  `json:"id"`
	Name       *string                `json:"name" onyx:"default"`
	Connector  onyxConnectorSnapshot  `json:"connector"`
	Credential onyxCredentialSnapshot `json:"credential"`
	AccessType quarry.AccessType      `json:"access_type"`
}

// onyxUserGroup mirrors Onyx's UserGroup.
type onyxUserGroup struct {
	ID              int64                `json:"id"`
	Name            string               `json:"name"`
	Users           []onyxUserInfo       `json:"users"`
	CuratorIDs      []onyxUUID           `json:"curator_ids"`
	CCPairs         []onyxPairDescriptor `json:"cc_pairs"`
	DocumentSets    []map[string]any     `json:"document_sets"`
	Personas        []map[string]any     `json:"personas"`
	IsUpToDate      bool                 `json:"is_up_to_date"`
	IsUpForDeletion bool                 `json:"is_up_for_deletion"`
}

// onyxStatusResponse mirrors Onyx's StatusResponse.
type onyxStatusResponse struct {
	Success bool    `json:"success"`
	Message *string `json:"message" onyx:"default"`
	Data    *int64  `json:"data" onyx:"default"`
}

// onyxObjectCreationID mirrors Onyx's ObjectCreationIdResponse.
type onyxObjectCreationID struct {
	ID         int64                   `json:"id"`
	Credential *onyxCredentialSnapshot `json:"credential" onyx:"default"`
}

// onyxAPIKey mirrors Onyx's DATestAPIKey, less the manager's own headers.
type onyxAPIKey struct {
	APIKeyID      int64    `json:"api_key_id"`
	APIKeyDisplay string   `json:"api_key_display"`
	APIKey        *string  `json:"api_key" onyx:"default"`
	APIKeyName    *string  `json:"api_key_name" onyx:"default"`
	APIKeyRole    onyxRole `json:"api_key_role"`
	UserID        onyxUUID `json:"user_id"`
}

// onyxHeader mirrors Onyx's Header, a custom header of a tool.
type onyxHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// onyxToolSnapshot mirrors Onyx's ToolSnapshot.
type onyxToolSnapshot struct {
	ID              int64           `json:"id"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Definition      *map[string]any `json:"definition"`
	DisplayName     string          `json:"display_name"`
	InCodeToolID    *string         `json:"in_code_tool_id"`
	CustomHeaders   *[]onyxHeader   `json:"custom_headers"`
	PassthroughAuth bool            `json:"passthrough_auth"`
	MCPServerID     *int64          `json:"mcp_server_id" onyx:"default"`
	UserID          *string         `json:"user_id" onyx:"default"`
	OAuthConfigID   *int64          `json:"oauth_config_id" onyx:"default"`
	OAuthConfigName *string         `json:"oauth_config_name" onyx:"default"`
	Enabled         bool            `json:"enabled"` // ToolManager.list_tools reads it
}

// onyxToolStatusUpdated mirrors what Onyx's PATCH /admin/tool/status answers.
type onyxToolStatusUpdated struct {
	UpdatedCount int64   `json:"updated_count"`
	ToolIDs      []int64 `json:"tool_ids"`
}

// onyxUserRead mirrors FastAPI-Users' UserRead, as Onyx extends it.
type onyxUserRead struct {
	ID          onyxUUID `json:"id"`
	Email       string   `json:"email"`
	IsActive    bool     `json:"is_active" onyx:"default"`
	IsSuperuser bool     `json:"is_superuser" onyx:"default"`
	IsVerified  bool     `json:"is_verified" onyx:"default"`
	Role        onyxRole `json:"role"`
}

// onyxFullUserSnapshot mirrors Onyx's FullUserSnapshot.
type onyxFullUserSnapshot struct {
	ID                 onyxUUID `json:"id"`
	Email              string   `json:"email"`
	Role               onyxRole `json:"role"`
	IsActive           bool     `json:"is_active"`
	PasswordConfigured bool     `json:"password_configured"`
}

// onyxPaginatedUsers mirrors Onyx's PaginatedReturn[FullUserSnapshot].
type onyxPaginatedUsers struct {
	Items      []onyxFullUserSnapshot `json:"items"`
	TotalItems int64                  `json:"total_items"`
}

// onyxParse checks that r answered status with a body that Onyx's model,
// mirrored by T, parses, and returns the parsed body.
func onyxParse[T any](t *testing.T, r *Response, status int) T {
	t.Helper()
	var v T
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	if err := onyxCheck("body", r.Body, reflect.TypeFor[T]()); err != nil {
		t.Fatalf("Onyx's model %T does not parse the answer: %v\n%s", v, err, r.Body)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
	return v
}

// onyxCheck checks raw against type typ of a mirror model as pydantic
// checks a value against a field: the fields of a model must be there
// unless they have a default, null only where the type is a pointer,
// enumerations among their values, and every value of its type.
func onyxCheck(loc string, raw json.RawMessage, typ reflect.Type) error {
	null := string(raw) == "null"
	switch {
	case typ.Kind() == reflect.Pointer:
		if null {
			return nil
		}
		return onyxCheck(loc, raw, typ.Elem())
	case null:
		return fmt.Errorf("%s: null, but Onyx's type is %v", loc, typ)
	case reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]()):
	case typ.Kind() == reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			v, ok := obj[name]
			if !ok {
				if f.Tag.Get("onyx") == onyxDefault {
					continue
				}
				return fmt.Errorf("%s.%s: missing", loc, name)
			}
			if err := onyxCheck(loc+"."+name, v, f.Type); err != nil {
				return err
			}
		}
		return nil
	case typ.Kind() == reflect.Slice:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		for i, item := range items {
			if err := onyxCheck(fmt.Sprintf("%s[%d]", loc, i), item, typ.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	v := reflect.New(typ)
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		return fmt.Errorf("%s: %v", loc, err)
	}
	if e, ok := v.Elem().Interface().(interface{ EnumValues() []string }); ok && !slices.Contains(e.EnumValues(), v.Elem().String()) {
		return fmt.Errorf("%s: %s is not one of Onyx's %v", loc, raw, e.EnumValues())
	}
	return nil
}
