// A real OpenID Provider for the sign-in browser test (web/e2e_test.go):
// the npm package oidc-provider (certified), with its development
// interactions (a login page that takes any login and password, and a
// consent page). node idp.mjs <port> <Quarry's URL>
//
// Every login is an email; the account's claims are that email (verified)
// and the name before the @. Quarry is its client twice: for signing in,
// and for a custom tool whose API is the provider's own userinfo endpoint
// (people connect their account for it). It prints "listening <issuer>"
// once it serves.

import Provider from 'oidc-provider';

const [port, quarry] = process.argv.slice(2);
if (!port || !quarry) {
  console.error('usage: node idp.mjs <port> <quarry url>');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'quarry',
    client_secret: 'e2e-client-secret-at-the-idp',
    redirect_uris: [`${quarry}/auth/oidc/callback`],
    post_logout_redirect_uris: [`${quarry}/`],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }, {
    // The OAuth client of a custom tool: people connect their account at
    // the provider for it (Quarry's /oauth-config/callback).
    client_id: 'quarry-tools',
    client_secret: 'e2e-tools-secret-at-the-idp',
    redirect_uris: [`${quarry}/oauth-config/callback`],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: id, email_verified: true, name: id.split('@')[0] };
      },
    };
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  cookies: { keys: ['quarry-e2e-cookie-signing-key'] },
});
// The development interactions warn at every start; that is expected here.
provider.listen(Number(port), '127.0.0.1', () => console.log(`listening ${issuer}`));
