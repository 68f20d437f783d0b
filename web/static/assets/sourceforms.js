// The forms of connector_specific_config for the sources Quarry has
// connectors for (docs/operations.md, "Connectors"), with Onyx v4.6.1's
// keys: one labelled field per key, checked before saving with a message
// that says what to fix. Other sources get the key/value editor. Keys a
// form does not know (set through the API) are kept as they are.

import { el, uid } from './ui.js';
import { kvEditor } from './kv.js';

// A field: key, label, kind (text, url, select, int, lines, pem, bool), and
// what it needs: required, min, max, options ([value, text]), lower (lines
// kept in lower case), the default of a new connector (initial), a hint;
// a box whose connector reads its key's absence otherwise than initial
// says so (absent).
const forms = {
  web: {
    intro: 'Pages are fetched over HTTP from the site of the base URL; its credential is empty.',
    fields: [
      { key: 'base_url', label: 'Base URL', kind: 'url', required: true, hint: 'Where the crawl starts, e.g. https://docs.example.com/. Without a scheme, https:// is assumed.' },
      { key: 'web_connector_type', label: 'What to index', kind: 'select', initial: 'recursive', options: [
        ['recursive', 'recursive: the site, following links under the base URL'],
        ['single', 'single: the base URL alone'],
        ['sitemap', 'sitemap: the pages of the site\'s sitemap'],
      ] },
      { key: 'max_pages', label: 'At most this many pages a run', kind: 'int', min: 1, hint: 'Empty: 10000.' },
      { key: 'request_delay_ms', label: 'Pause between requests (ms)', kind: 'int', min: 0, max: 60000, hint: 'Empty: 500.' },
    ],
  },
  confluence: {
    intro: 'Pages of a Confluence site, with their comments, read through its REST API. Its credential holds confluence_username (the account\'s email; Cloud only) ' +
      'and confluence_access_token (an Atlassian API token on Cloud, a personal access token on Data Center): docs/operations.md, "confluence".',
    fields: [
      { key: 'wiki_base', label: 'Wiki Base URL', kind: 'url', required: true, hint: 'The base URL of your Confluence instance (e.g., https://your-domain.atlassian.net/wiki).' },
      { key: 'is_cloud', label: 'Is Cloud', kind: 'bool', initial: true, absent: false, hint: 'Check if this is a Confluence Cloud instance, uncheck for Confluence Server/Data Center.' },
      { key: 'space', label: 'Space Key', kind: 'text', hint: 'The Confluence space key to index (e.g. KB). Empty: every space the account can read.' },
      { key: 'page_id', label: 'Page ID', kind: 'text', hint: 'Specific page ID to index (e.g. 131368), instead of a space.' },
      { key: 'index_recursively', label: 'Index Recursively', kind: 'bool', hint: 'With a page ID: index the page and all of its children.' },
      { key: 'cql_query', label: 'CQL Query', kind: 'text', hint: 'Instead of a space or page: a CQL query that returns pages only (type=page), without lastmodified filters, which the connector adds.' },
      { key: 'labels_to_skip', label: 'Labels to skip', kind: 'lines', hint: 'One per line: pages with one of these labels are not indexed.' },
    ],
  },
  file: {
    intro: 'Files uploaded to Quarry; its credential is empty.',
    fields: [
      { key: 'file_locations', label: 'File locations', kind: 'lines', required: true, hint: 'One per line: the locations the upload answers with.' },
    ],
    // The upload (fileupload.js, shown above the form for this source)
    // fills the form through merge.
  },
  imap: {
    intro: 'Mail read over IMAP, always encrypted (TLS from the first byte, or STARTTLS). Its credential holds imap_username and imap_password.',
    fields: [
      { key: 'host', label: 'IMAP host', kind: 'text', required: true, hint: 'e.g. imap.example.com' },
      { key: 'port', label: 'Port', kind: 'int', min: 1, max: 65535, hint: 'Empty: 993 (with STARTTLS, the server\'s port is usually 143).' },
      { key: 'mailboxes', label: 'Mailboxes', kind: 'lines', hint: 'One per line, e.g. INBOX. Empty: every mailbox.' },
      { key: 'security', label: 'Security', kind: 'select', initial: 'tls', options: [
        ['tls', 'tls: TLS from the first byte (usually port 993)'],
        ['starttls', 'starttls: a plain connection upgraded with STARTTLS before the login (usually port 143)'],
      ], hint: 'There is no unencrypted mode: the password never goes in clear. TLS 1.2 or later, the certificate checked against the host.' },
      { key: 'ca_certificate', label: 'CA certificates (PEM)', kind: 'pem', hint: 'For a server whose certificate a private authority signs: that authority\'s PEM certificates, which then replace the system\'s for this server. Empty: the system\'s authorities.' },
    ],
  },
  jira: {
    intro: 'Issues of a Jira site, with their comments. Its credential holds jira_user_email and jira_api_token: for Jira Cloud, ' +
      'the account\'s email and an Atlassian API token (id.atlassian.com, Security, API tokens); for Jira Data Center, a personal ' +
      'access token alone, with no email. The account needs Browse projects; for a sync pair, Administer Jira too (docs/operations.md, "jira").',
    fields: [
      { key: 'jira_base_url', label: 'Jira Base URL', kind: 'url', required: true, hint: 'The base URL of your Jira instance, e.g. https://your-domain.atlassian.net' },
      { key: 'scoped_token', label: 'Using scoped token', kind: 'bool', initial: false, hint: 'Using scoped token? Check it for an Atlassian API token with scopes, which Jira Cloud serves through api.atlassian.com.' },
      { key: 'project_key', label: 'Project Key', kind: 'text', hint: 'The key of a specific project to index, e.g. PROJ. Empty (and no JQL query): every issue the account may browse.' },
      { key: 'jql_query', label: 'JQL Query', kind: 'text', hint: 'Instead of a project: a JQL query, e.g. project = PROJ AND labels = docs. No time condition and no ORDER BY: the connector adds the window.' },
      { key: 'comment_email_blacklist', label: 'Comment Email Blacklist', kind: 'lines', hint: 'One email per line: their comments are not indexed (bots).' },
      { key: 'labels_to_skip', label: 'Labels to skip', kind: 'lines', hint: 'One label per line: an issue with one of them is not indexed.' },
    ],
    check: (c) => (c.project_key !== undefined && c.jql_query !== undefined
      ? { key: 'jql_query', msg: 'Give a project key or a JQL query, not both.' } : null),
  },
  google_drive: {
    intro: 'Files of Google Drive: Google Docs exported as text, Sheets as CSV, Slides as PowerPoint, other files (PDF, Word, PowerPoint, text, CSV, HTML) downloaded; a file over 10 MiB is an error of its document. ' +
      'Its credential holds google_service_account_key (the JSON key of a service account with domain-wide delegation), google_primary_admin ' +
      '(a Workspace administrator\'s email, whom the account impersonates) and authentication_method "uploaded". To create it: in the Google Cloud ' +
      'console, enable the Google Drive API and the Admin SDK API, create a service account and a JSON key for it; in the Workspace admin console ' +
      '(Security, Access and data control, API controls, Domain-wide delegation), add its client ID with the scopes ' +
      'https://www.googleapis.com/auth/drive.readonly, https://www.googleapis.com/auth/drive.metadata.readonly, ' +
      'https://www.googleapis.com/auth/admin.directory.group.readonly and https://www.googleapis.com/auth/admin.directory.user.readonly ' +
      '(docs/operations.md, "google_drive"). An OAuth credential (google_tokens) reads as its one user.',
    fields: [
      { key: 'include_shared_drives', label: 'Include shared drives?', kind: 'bool', hint: 'This will allow Quarry to index everything in your Organization\'s shared drives.' },
      { key: 'include_my_drives', label: 'Include Everyone\'s My Drive?', kind: 'bool', hint: 'This will allow Quarry to index everything in everyone\'s My Drives.' },
      { key: 'include_files_shared_with_me', label: 'Include All Files Shared With You?', kind: 'bool', hint: 'This will allow Quarry to index all files shared with the users it reads as.' },
      { key: 'shared_drive_urls', label: 'Shared Drive URLs', kind: 'text', hint: 'Specific: a comma separated list of the URLs for the shared drive you would like to index. It replaces the three choices above.' },
      { key: 'shared_folder_urls', label: 'Folder URLs', kind: 'text', hint: 'Specific: a comma separated list of the URLs of any folders you would like to index. The files located in these folders (and all subfolders) will be indexed.' },
      { key: 'my_drive_emails', label: 'My Drive Emails', kind: 'text', hint: 'Specific: a comma separated list of the emails of the users whose MyDrive you want to index.' },
      { key: 'specific_user_emails', label: 'Specific User Emails', kind: 'text', hint: 'Advanced: a comma separated list of specific user emails to index. This will only index files accessible to these users. Empty: the admin and every user of the domain.' },
      { key: 'exclude_domain_link_only', label: 'Hide domain link-only files?', kind: 'bool', hint: 'When enabled, Quarry skips files that are shared broadly (domain or public) but require the link to access.' },
    ],
    check: (c) => (!c.include_shared_drives && !c.include_my_drives && !c.include_files_shared_with_me &&
      !c.shared_drive_urls && !c.shared_folder_urls && !c.my_drive_emails
      ? { key: 'include_shared_drives', msg: 'Include shared drives, My Drives or files shared with you, or name drives, folders or My Drive emails: at least one.' } : null),
  },
  mediawiki: {
    intro: 'Pages of a MediaWiki site; its credential is empty.',
    fields: [
      { key: 'hostname', label: 'Wiki host', kind: 'text', required: true, hint: 'e.g. wiki.example.com' },
      { key: 'pages', label: 'Pages', kind: 'lines', hint: 'One title per line.' },
      { key: 'categories', label: 'Categories', kind: 'lines', hint: 'One per line, without "Category:".' },
      { key: 'recurse_depth', label: 'Subcategory depth', kind: 'int', min: -1, required: true, initial: 0, hint: '0: the categories themselves; -1: every subcategory.' },
      { key: 'language_code', label: 'Language code', kind: 'text', initial: 'en', hint: 'Empty: en.' },
    ],
    check: (c) => ((c.pages?.length ?? 0) + (c.categories?.length ?? 0) === 0
      ? { key: 'pages', msg: 'Name at least one page or one category.' } : null),
  },
  slack: {
    intro: 'Messages of a Slack workspace, read by a Slack app you create (docs/operations.md, "slack": its bot token scopes). ' +
      'Its credential holds slack_bot_token, the app\'s Bot User OAuth Token (xoxb-…). A thread is one document.',
    fields: [
      { key: 'channels', label: 'Channels', kind: 'lines', lower: true, hint: 'One per line, e.g. support for #support. Empty: every channel the bot can read (public ones, which it joins, and the private ones it was added to).' },
      { key: 'channel_regex_enabled', label: 'Enable channel regex', kind: 'bool', hint: 'Treat the channels above as regular expressions: a channel is read when its whole name matches one, e.g. .*-support.*' },
      { key: 'exclude_channels', label: 'Channels to exclude', kind: 'lines', lower: true, hint: 'One per line, applied after the channels above. Empty: none.' },
      { key: 'exclude_channel_regex_enabled', label: 'Enable exclude channel regex', kind: 'bool', hint: 'Treat the channels to exclude as regular expressions, e.g. .*-alerts' },
      { key: 'include_bot_messages', label: 'Include bot messages', kind: 'bool', hint: 'Index the messages of bots and apps too (feeds, automated notes).' },
    ],
  },
  github: {
    intro: 'Pull requests, issues and documents of the repositories of a GitHub organization or user, read with a personal access token ' +
      '(its credential holds github_access_token): a fine-grained token with read access to Metadata, Issues and Pull requests ' +
      '(Contents too for documents; the organization\'s Members for permission sync), or a classic token with the repo scope ' +
      '(and read:org for permission sync).',
    fields: [
      { key: 'repo_owner', label: 'Repository owner', kind: 'text', required: true, hint: 'The GitHub organization or user, e.g. acme.' },
      { key: 'repositories', label: 'Repository names', kind: 'text', hint: 'Comma-separated, e.g. api,web. Empty: every repository the token can read.' },
      { key: 'include_prs', label: 'Include pull requests', kind: 'bool', initial: true },
      { key: 'include_issues', label: 'Include issues', kind: 'bool', initial: false },
      { key: 'include_files', label: 'Include documents', kind: 'bool', initial: false, hint: 'Text documents of a branch: Markdown, .rst, .txt, README, LICENSE and the like.' },
      { key: 'branch', label: 'Branch', kind: 'text', hint: 'The branch documents are read from. Empty: each repository\'s default branch.' },
    ],
    check: (c) => (!c.include_prs && !c.include_issues && !c.include_files
      ? { key: 'include_prs', msg: 'Include pull requests, issues or documents: at least one.' } : null),
  },
};

/** hasForm reports whether source has a form of its own. */
export const hasForm = (source) => Object.hasOwn(forms, source);

/** fieldError is the error of a field, which it marks and focuses. */
function fieldError(input, msg) {
  input.setAttribute('aria-invalid', 'true');
  input.focus();
  return new Error(msg);
}

/**
 * configEditor fills container with the form of source's configuration
 * (or the key/value editor) holding config, and returns {get, source,
 * merge}: get returns the configuration or throws an Error that says what
 * to fix, with the field marked; merge (null without a form) takes the
 * keys a file upload answered with (file_locations, file_names,
 * zip_metadata_file_id).
 */
export function configEditor(container, source, config = {}, { isNew = false } = {}) {
  const form = forms[source];
  if (!form) {
    const kv = kvEditor(container, config, { name: 'setting' });
    return { get: kv.get, source, merge: null };
  }
  const base = uid(`${container.id || 'cfg'}-${source}`);
  const inputs = new Map();
  const nodes = [el('p', { class: 'muted small' }, form.intro)];
  for (const f of form.fields) {
    const id = `${base}-${f.key}`;
    const hintID = f.hint ? `${id}-hint` : null;
    let v = config[f.key];
    if (v === undefined && isNew) v = f.initial;
    let input;
    if (f.kind === 'bool') {
      const b = v ?? (f.absent ?? f.initial); // Absent: the connector's default.
      input = el('input', { id, type: 'checkbox', checked: b === true || b === 'true' });
    } else if (f.kind === 'select') {
      input = el('select', { id }, ...f.options.map(([o, t]) => el('option', { value: o }, t)));
      input.value = v ?? f.initial;
    } else if (f.kind === 'lines') {
      input = el('textarea', { id, rows: 3, spellcheck: false, value: Array.isArray(v) ? v.join('\n') : (v ?? '') });
    } else if (f.kind === 'pem') {
      input = el('textarea', { id, rows: 4, class: 'code', spellcheck: false, value: typeof v === 'string' ? v : '' });
    } else {
      input = el('input', { id, type: f.kind === 'int' ? 'number' : (f.kind === 'url' ? 'url' : 'text'),
        autocomplete: 'off', spellcheck: false, value: v === undefined || v === null ? '' : String(v) });
      if (f.kind === 'int') {
        input.step = '1';
        input.inputMode = 'numeric';
        if (f.min !== undefined) input.min = String(f.min);
        if (f.max !== undefined) input.max = String(f.max);
      }
    }
    if (f.required) input.required = true;
    if (hintID) input.setAttribute('aria-describedby', hintID);
    input.dataset.key = f.key;
    inputs.set(f.key, input);
    const hint = hintID ? el('p', { id: hintID, class: 'muted small' }, f.hint) : null;
    if (f.kind === 'bool') { // The box, then its label, as the console's other checkboxes.
      nodes.push(el('div', { class: 'field' }, el('div', { class: 'checks' }, input, el('label', { for: id }, f.label)), hint));
      continue;
    }
    nodes.push(el('div', { class: 'field' },
      el('label', { for: id }, f.label, f.required ? '' : el('span', { class: 'muted' }, ' (optional)')),
      input,
      hint));
  }
  container.replaceChildren(...nodes);

  function get() {
    // Keys the form does not know stay as they were.
    const out = { ...config };
    for (const f of form.fields) {
      const input = inputs.get(f.key);
      input.removeAttribute('aria-invalid');
      delete out[f.key];
      if (f.kind === 'bool') {
        out[f.key] = input.checked;
        continue;
      }
      const raw = input.value.trim();
      if (raw === '') {
        if (f.required) throw fieldError(input, `${f.label} is required.`);
        continue;
      }
      switch (f.kind) {
        case 'int': {
          const n = Number(raw);
          if (!Number.isInteger(n)) throw fieldError(input, `${f.label} must be a whole number.`);
          if (f.min !== undefined && n < f.min) throw fieldError(input, `${f.label} must be at least ${f.min}.`);
          if (f.max !== undefined && n > f.max) throw fieldError(input, `${f.label} must be at most ${f.max}.`);
          out[f.key] = n;
          break;
        }
        case 'url': {
          let u;
          try {
            u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
          } catch {
            throw fieldError(input, `${f.label} is not a URL.`);
          }
          if (u.protocol !== 'http:' && u.protocol !== 'https:') throw fieldError(input, `${f.label} must be an http or https URL.`);
          out[f.key] = raw;
          break;
        }
        case 'lines':
          out[f.key] = raw.split('\n').map((s) => (f.lower ? s.trim().toLowerCase() : s.trim())).filter((s) => s !== '');
          break;
        case 'pem':
          if (!raw.includes('-----BEGIN CERTIFICATE-----')) {
            throw fieldError(input, `${f.label} must be PEM: one or more blocks from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----.`);
          }
          out[f.key] = `${raw}\n`;
          break;
        default:
          if (f.kind === 'text' && /\s/.test(raw) && (f.key === 'host' || f.key === 'hostname')) {
            throw fieldError(input, `${f.label} is a host name, without spaces.`);
          }
          out[f.key] = raw;
      }
    }
    const bad = form.check?.(out);
    if (bad) throw fieldError(inputs.get(bad.key), bad.msg);
    return out;
  }

  /**
   * merge appends an upload's locations to the file form's field and keeps
   * its file names and zip metadata beside them; on another form, the keys
   * are set as they are.
   */
  function merge({ file_locations: locations = [], file_names: names = [], ...rest }) {
    const input = inputs.get('file_locations');
    if (!input) {
      config = { ...config, file_locations: locations, file_names: names, ...rest };
      return;
    }
    const have = input.value.trim();
    input.value = [have, ...locations].filter((s) => s !== '').join('\n');
    config = { ...config, file_names: [...(have === '' ? [] : config.file_names ?? []), ...names] };
    for (const [k, v] of Object.entries(rest)) {
      if (v !== null && v !== undefined) config[k] = v;
    }
  }

  return { get, source, merge };
}
