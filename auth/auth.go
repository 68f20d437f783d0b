// Package auth signs people in to Quarry: it hashes and checks passwords
// (argon2id) and the rules new ones must meet, runs single sign-on with an
// OpenID provider (the authorization code flow with PKCE, state and nonce,
// done by the server for the browser), checks the provider's JWT access
// tokens as an OAuth 2.0 resource server, and gives people their roles from
// the provider's claims.
//
// It knows nothing of SQL: package store keeps users and sessions, and
// package api serves the sign-in routes and sets the session cookie.
package auth
