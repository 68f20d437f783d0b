// The file connector's upload, in the connector form: files chosen (or a
// zip, with its .onyx_metadata.json) are sent to POST
// manage/admin/connector/file/upload (Onyx's upload_files_api) with
// XMLHttpRequest, whose upload events move a progress bar; the answer
// (Onyx's FileUploadResponse) goes into the connector's configuration as
// file_locations, file_names and zip_metadata_file_id; the files it names
// in unread_files (Quarry's: kinds the connector does not read) are
// listed with why.

import { getKey, APIError } from './api.js';
import { el, uid, showError, clearError, said, plural } from './ui.js';

/**
 * upload sends files and resolves with the server's answer; onProgress is
 * called with the fraction of the body sent (0 to 1). A non-2xx answer
 * rejects with APIError, as call does.
 */
export function upload(files, onProgress) {
  const form = new FormData();
  for (const f of files) form.append('files', f, f.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', 'manage/admin/connector/file/upload');
    xhr.setRequestHeader('Accept', 'application/json');
    const bearer = getKey();
    if (bearer) xhr.setRequestHeader('Authorization', `Bearer ${bearer}`);
    xhr.withCredentials = !bearer;
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('error', () => reject(new APIError(0, 'The server could not be reached.')));
    xhr.addEventListener('abort', () => reject(new APIError(0, 'The upload was stopped.')));
    xhr.addEventListener('load', () => {
      let data = null;
      try {
        data = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        data = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(data);
        return;
      }
      if (xhr.status === 401) window.dispatchEvent(new CustomEvent('quarry:unauthorized'));
      reject(new APIError(xhr.status, data && data.detail !== undefined ? data.detail : `${xhr.status} ${xhr.statusText}`));
    });
    xhr.send(form);
  });
}

/**
 * fileUpload fills box with the upload controls and returns {show}: show(on)
 * shows them (the connector's source is file) or hides them. merge is
 * called with the configuration keys an upload sets.
 */
export function fileUpload(box, merge) {
  const id = uid('file-upload');
  const input = el('input', { type: 'file', id, multiple: true });
  const button = el('button', { type: 'button', class: 'secondary' }, 'Upload');
  const bar = el('progress', { max: '100', value: '0', 'aria-label': 'Upload progress', hidden: true });
  const note = el('p', { class: 'muted small', role: 'status', 'aria-live': 'polite' });
  const error = el('div', { class: 'error', role: 'alert' });
  const unread = el('div', { class: 'note', hidden: true });
  /** showUnread lists the files of the upload that will not be read, or hides the list. */
  const showUnread = (files) => {
    unread.hidden = files.length === 0;
    unread.replaceChildren(...(files.length === 0 ? [] : [
      el('p', {}, files.length === 1
        ? 'Quarry keeps this file but will not read it; it will be an error of the pair\'s attempts:'
        : 'Quarry keeps these files but will not read them; each will be an error of the pair\'s attempts:'),
      el('ul', {}, ...files.map((f) => el('li', {}, el('strong', {}, f.file_name), `: ${f.reason}`)))]));
  };
  box.replaceChildren(
    el('div', { class: 'field' },
      el('label', { for: id }, 'Files to index'),
      el('p', { class: 'muted small' }, 'Text, Markdown, HTML, CSV, JSON, PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx) and OpenDocument (.odt, .ods, .odp) files, or one zip of them (with its .onyx_metadata.json, if any). Uploading fills in the configuration below.'),
      input),
    el('div', { class: 'actions' }, button, bar), note, unread, error);
  button.addEventListener('click', async () => {
    clearError(error);
    if (!input.files.length) {
      said(note, 'Choose the files first.');
      input.focus();
      return;
    }
    const files = [...input.files];
    button.disabled = true;
    showUnread([]);
    bar.hidden = false;
    bar.value = 0;
    said(note, `Uploading ${files.length} file${files.length === 1 ? '' : 's'}…`);
    try {
      const data = await upload(files, (f) => { bar.value = Math.round(f * 100); });
      merge({ file_locations: data.file_paths, file_names: data.file_names, zip_metadata_file_id: data.zip_metadata_file_id });
      const notRead = data.unread_files ?? [];
      said(note, `Uploaded: ${data.file_names.length} file${data.file_names.length === 1 ? '' : 's'} (${data.file_names.join(', ')})${data.zip_metadata_file_id ? ', with the zip\'s metadata' : ''}.` +
        (notRead.length ? ` ${plural(notRead.length, 'file')} will not be read.` : ''));
      showUnread(notRead);
    } catch (e) {
      said(note, '');
      bar.hidden = true;
      showError(error, e);
    } finally {
      button.disabled = false;
    }
  });
  return {
    show(on) {
      box.hidden = !on;
      if (!on) {
        input.value = '';
        bar.hidden = true;
        said(note, '');
        showUnread([]);
        clearError(error);
      }
    },
  };
}
