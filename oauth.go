package quarry

// OAuthConfig describes how custom tools obtain OAuth tokens from an
// authorization server. Its client secret is encrypted at rest and never
// returned.
type OAuthConfig struct {
	ID               int64    `json:"id"`
	Name             string   `json:"name"`
	AuthorizationURL string   `json:"authorization_url"`
	TokenURL         string   `json:"token_url"`
	ClientID         string   `json:"client_id"`
	ClientSecret     string   `json:"-"`
	Scopes           []string `json:"scopes"`
	UserID           *string  `json:"user_id"`
	CreatedAt        Time     `json:"time_created"`
	UpdatedAt        Time     `json:"time_updated"`
}
