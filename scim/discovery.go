package scim

import (
	"strings"

	"github.com/quarryhq/quarry"
)

// The discovery documents (RFC 7643 sections 5, 6 and 7), served without
// authentication: providers read them while the token is being set up.
// They describe what Quarry does: the attributes it keeps, PATCH and
// filters, ETags, no bulk, no sorting, no password changes.

// MaxResults is the largest page of a listing (the count parameter's cap).
const MaxResults = 500

// ServiceProviderConfig is the service provider configuration.
type ServiceProviderConfig struct {
	Schemas               []string               `json:"schemas"`
	DocumentationURI      string                 `json:"documentationUri"`
	Patch                 Supported              `json:"patch"`
	Bulk                  BulkConfig             `json:"bulk"`
	Filter                FilterConfig           `json:"filter"`
	ChangePassword        Supported              `json:"changePassword"`
	Sort                  Supported              `json:"sort"`
	ETag                  Supported              `json:"etag"`
	AuthenticationSchemes []AuthenticationScheme `json:"authenticationSchemes"`
	Meta                  DocumentMeta           `json:"meta"`
}

// Supported says whether a feature is.
type Supported struct {
	Supported bool `json:"supported"`
}

// BulkConfig says that bulk operations are not supported.
type BulkConfig struct {
	Supported      bool `json:"supported"`
	MaxOperations  int  `json:"maxOperations"`
	MaxPayloadSize int  `json:"maxPayloadSize"`
}

// FilterConfig says that filters are supported, and the largest page.
type FilterConfig struct {
	Supported  bool `json:"supported"`
	MaxResults int  `json:"maxResults"`
}

// AuthenticationScheme is how a provider authenticates.
type AuthenticationScheme struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Primary     bool   `json:"primary"`
}

// DocumentMeta is the metadata of a discovery document.
type DocumentMeta struct {
	ResourceType string `json:"resourceType"`
	Location     string `json:"location"`
}

// NewServiceProviderConfig returns the configuration, served at base +
// "/ServiceProviderConfig" (base is the SCIM base URL, ".../scim/v2").
func NewServiceProviderConfig(base string) *ServiceProviderConfig {
	return &ServiceProviderConfig{
		Schemas:          []string{ServiceProviderConfigSchema},
		DocumentationURI: "https://github.com/quarryhq/quarry/blob/main/docs/operations.md#provisioning-people-and-groups-scim",
		Patch:            Supported{true},
		Bulk:             BulkConfig{},
		Filter:           FilterConfig{Supported: true, MaxResults: MaxResults},
		ETag:             Supported{true},
		AuthenticationSchemes: []AuthenticationScheme{{Type: "oauthbearertoken", Name: "OAuth Bearer Token",
			Description: "Authentication scheme using a SCIM bearer token", Primary: true}},
		Meta: DocumentMeta{ResourceType: "ServiceProviderConfig", Location: base + "/ServiceProviderConfig"},
	}
}

// ResourceType describes the Users or the Groups endpoint.
type ResourceType struct {
	Schemas          []string          `json:"schemas"`
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Endpoint         string            `json:"endpoint"`
	Description      string            `json:"description"`
	Schema           string            `json:"schema"`
	SchemaExtensions []SchemaExtension `json:"schemaExtensions"`
	Meta             DocumentMeta      `json:"meta"`
}

// SchemaExtension names an extension of a resource type's schema.
type SchemaExtension struct {
	Schema   string `json:"schema"`
	Required bool   `json:"required"`
}

// ResourceTypes returns the resource types, under base.
func ResourceTypes(base string) []any {
	return []any{
		&ResourceType{Schemas: []string{ResourceTypeSchema}, ID: "User", Name: "User", Endpoint: "/Users",
			Description: "SCIM User resource", Schema: UserSchema,
			SchemaExtensions: []SchemaExtension{{Schema: EnterpriseUserSchema, Required: false}},
			Meta:             DocumentMeta{ResourceType: "ResourceType", Location: base + "/ResourceTypes/User"}},
		&ResourceType{Schemas: []string{ResourceTypeSchema}, ID: "Group", Name: "Group", Endpoint: "/Groups",
			Description: "SCIM Group resource", Schema: GroupSchema, SchemaExtensions: []SchemaExtension{},
			Meta: DocumentMeta{ResourceType: "ResourceType", Location: base + "/ResourceTypes/Group"}},
	}
}

// Schema describes the attributes of a resource that Quarry keeps.
type Schema struct {
	Schemas     []string     `json:"schemas"`
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Attributes  []*Attribute `json:"attributes"`
	Meta        DocumentMeta `json:"meta"`
}

// Attribute describes an attribute (RFC 7643 section 7).
type Attribute struct {
	Name          string       `json:"name"`
	Type          string       `json:"type"`
	MultiValued   bool         `json:"multiValued"`
	Required      bool         `json:"required"`
	Description   string       `json:"description"`
	CaseExact     bool         `json:"caseExact"`
	Mutability    string       `json:"mutability"`
	Returned      string       `json:"returned"`
	Uniqueness    string       `json:"uniqueness"`
	SubAttributes []*Attribute `json:"subAttributes"`
	// ReferenceTypes, of a reference, and CanonicalValues, of a string,
	// say what values may be (RFC 7643 section 7).
	ReferenceTypes  []string `json:"referenceTypes,omitempty"`
	CanonicalValues []string `json:"canonicalValues,omitempty"`
}

// attr returns a single-valued, optional, read-write, case-insensitive
// string attribute with no uniqueness; the options change it.
func attr(name, description string, options ...func(*Attribute)) *Attribute {
	a := &Attribute{Name: name, Type: "string", Description: description, Mutability: "readWrite",
		Returned: "default", Uniqueness: "none", SubAttributes: []*Attribute{}}
	for _, o := range options {
		o(a)
	}
	return a
}

func typed(t string) func(*Attribute) { return func(a *Attribute) { a.Type = t } }
func required(a *Attribute)           { a.Required = true }
func multi(a *Attribute)              { a.MultiValued = true }
func caseExact(a *Attribute)          { a.CaseExact = true }
func readOnly(a *Attribute)           { a.Mutability = "readOnly" }
func unique(a *Attribute)             { a.Uniqueness = "server" }
func notReturned(a *Attribute)        { a.Mutability, a.Returned = "immutable", "never" }
func sub(s ...*Attribute) func(*Attribute) {
	return func(a *Attribute) { a.Type = "complex"; a.SubAttributes = s }
}

// Schemas returns the schemas, under base.
func Schemas(base string) []any {
	meta := func(id string) DocumentMeta {
		return DocumentMeta{ResourceType: "Schema", Location: base + "/Schemas/" + id}
	}
	return []any{
		&Schema{Schemas: []string{SchemaSchema}, ID: UserSchema, Name: "User", Description: "SCIM core User schema",
			Meta: meta(UserSchema), Attributes: []*Attribute{
				attr("userName", "Unique identifier for the user at the directory; compared without regard to case. A person needs an email address: the primary (or first) of emails, else userName when it is one (map the person's email to one of them).", required, unique),
				attr("name", "The components of the user's name.", sub(
					attr("givenName", "The user's first name."),
					attr("familyName", "The user's last name."),
					attr("formatted", "The full name."))),
				attr("displayName", "The name of the user; Quarry shows it (else formatted, else the given and family names) as the person's name."),
				attr("emails", "Email addresses for the user; the primary one (else the first) is the address the user signs in with. A person needs an email: here, or as userName.", multi, sub(
					attr("value", "Email address value.", required),
					attr("type", "Label for this email (e.g. 'work')."),
					attr("primary", "Whether this is the primary email.", typed("boolean")),
					attr("display", "A label of the address."))),
				attr("active", "Whether the user may sign in; false ends the user's sessions. Absent from a POST or PUT, true. It cannot be removed (400 mutability: a person is active or not): replace it with false to deactivate.", typed("boolean")),
				attr("externalId", "Identifier of the user at the provisioning client (IdP).", caseExact, unique),
				attr("groups", "The groups the user is a member of.", multi, readOnly, sub(
					attr("value", "Group id.", readOnly),
					attr("display", "Group name.", readOnly))),
			}},
		&Schema{Schemas: []string{SchemaSchema}, ID: GroupSchema, Name: "Group", Description: "SCIM core Group schema",
			Meta: meta(GroupSchema), Attributes: []*Attribute{
				attr("displayName", "Human-readable name for the group; unique.", required, unique),
				attr("members", "Members of the group: users of the directory.", multi, sub(
					attr("value", "User id of the group member.", required),
					attr("display", "Email of the group member.", readOnly),
					attr("$ref", "The URI of the member: accepted (Entra ID sends null) and not kept; a member is named by value.", typed("reference"),
						notReturned, func(a *Attribute) { a.ReferenceTypes = []string{"User"} }),
					attr("type", "The member's type: User (groups are not members of groups here).", notReturned,
						func(a *Attribute) { a.CanonicalValues = []string{"User"} }))),
				attr("externalId", "Identifier of the group at the provisioning client (IdP).", caseExact, unique),
			}},
		&Schema{Schemas: []string{SchemaSchema}, ID: EnterpriseUserSchema, Name: "EnterpriseUser",
			Description: "Enterprise User extension (RFC 7643 section 4.3)", Meta: meta(EnterpriseUserSchema),
			Attributes: []*Attribute{
				attr("department", "Department."),
				attr("manager", "The user's manager.", sub(attr("value", "Manager user ID."))),
			}},
	}
}

// FindResourceType returns the resource type named name (in any case),
// under base; one Quarry does not have is a 404.
func FindResourceType(base, name string) (any, error) {
	for _, rt := range ResourceTypes(base) {
		if strings.EqualFold(rt.(*ResourceType).ID, name) {
			return rt, nil
		}
	}
	return nil, quarry.Errorf(quarry.ENOTFOUND, "Resource type %s not found", name)
}

// FindSchema returns the schema whose id is id (in any case), under base;
// one Quarry does not have is a 404.
func FindSchema(base, id string) (any, error) {
	for _, sc := range Schemas(base) {
		if strings.EqualFold(sc.(*Schema).ID, id) {
			return sc, nil
		}
	}
	return nil, quarry.Errorf(quarry.ENOTFOUND, "Schema %s not found", id)
}
