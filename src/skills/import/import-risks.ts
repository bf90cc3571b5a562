/*
 * What a reviewer should see before an AgentSkills folder becomes instructions an agent follows:
 * scripts (never run by Steward), URLs, credential-looking strings, and instructions to send
 * data away or hide actions from the user. Reading only; nothing here executes anything.
 */

export type RiskKind = 'script' | 'url' | 'credential' | 'exfiltration';

export type ImportRisk = {
  kind: RiskKind;
  /** `danger` skips the skill unless the import is forced. */
  level: 'note' | 'warning' | 'danger';
  /** Path inside the skill folder. */
  file: string;
  line?: number;
  detail: string;
};

const SCRIPT_EXTENSIONS =
  /\.(sh|bash|zsh|fish|py|js|mjs|cjs|ts|rb|pl|php|ps1|psm1|bat|cmd|exe|bin|dll|so|dylib|jar|wasm|applescript|vbs)$/i;

const CREDENTIALS: Array<[RegExp, string]> = [
  [/AKIA[0-9A-Z]{16}/, 'an AWS access key'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  [/\bsk-(?:proj-|or-v1-|ant-)?[A-Za-z0-9_-]{20,}/, 'an API key (sk-…)'],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}/, 'a GitHub token'],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\bAIza[0-9A-Za-z_-]{35}/, 'a Google API key'],
  [/\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, 'a JSON web token'],
  [
    /\b(?:api[_-]?key|secret|token|password|passwd|auth)\w*\s*[:=]\s*["']?(?![<{$]|your|xxx|example|changeme)[A-Za-z0-9/+_.-]{12,}/i,
    'a credential assigned in the text',
  ],
];

const EXFILTRATION: Array<[RegExp, string]> = [
  [
    /\b(?:send|post|upload|e-?mail|mail|forward|transmit|exfiltrat\w*|leak|share|paste)\b[^.\n]{0,80}\b(?:credentials?|passwords?|api[ _-]?keys?|tokens?|secrets?|ssh keys?|private keys?|\.env\b|environment variables|cookies|session ids?)/i,
    'asks to send credentials or secrets somewhere',
  ],
  [
    /\b(?:curl|wget|fetch|invoke-webrequest|nc|netcat)\b[^\n]{0,120}(?:\$\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)|\$\(|\bprintenv\b|\benv\b|\/etc\/passwd|\.ssh|id_rsa|\.env\b|\.aws)/i,
    'a network command that carries secrets, the environment or key files',
  ],
  [
    /(?:~|\$HOME|%USERPROFILE%)[/\\]\.(?:ssh|aws|gnupg|netrc|docker[/\\]config\.json|config[/\\]gcloud)/i,
    'reads key or credential files',
  ],
  [/\bbase64\b[^\n]{0,60}\|\s*(?:curl|wget|nc)\b/i, 'encodes data and pipes it to the network'],
  [
    /\bignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules|messages)/i,
    'tries to override earlier instructions',
  ],
  [
    /\b(?:do not|don't|never)\s+(?:tell|inform|mention|show|alert|notify)\b[^.\n]{0,40}\buser\b/i,
    'asks to hide what it does from the user',
  ],
];

const URL = /\bhttps?:\/\/[^\s)>"'`\]]+/g;

/** The risks in one file of a skill folder. `text` is null for a binary file. */
export function scanFile(file: string, text: string | null, executable: boolean): ImportRisk[] {
  const risks: ImportRisk[] = [];
  const isScript =
    SCRIPT_EXTENSIONS.test(file) ||
    file.startsWith('scripts/') ||
    executable ||
    (text?.startsWith('#!') ?? false);
  if (isScript) {
    risks.push({
      kind: 'script',
      level: 'warning',
      file,
      detail: 'a script or program: Steward never runs it; it is kept for reference only',
    });
  }
  if (text === null) return risks;
  const lines = text.split('\n');
  const seenUrls = new Set<string>();
  lines.forEach((content, index) => {
    const line = index + 1;
    for (const match of content.matchAll(URL)) {
      const url = match[0].replace(/[.,;:]+$/, '');
      if (seenUrls.has(url)) continue;
      seenUrls.add(url);
      risks.push({ kind: 'url', level: 'note', file, line, detail: url });
    }
    for (const [pattern, label] of CREDENTIALS) {
      const match = pattern.exec(content);
      if (match) {
        risks.push({
          kind: 'credential',
          level: 'danger',
          file,
          line,
          detail: `${label} (${redacted(match[0])})`,
        });
        break;
      }
    }
    for (const [pattern, label] of EXFILTRATION) {
      const match = pattern.exec(content);
      if (match)
        risks.push({
          kind: 'exfiltration',
          level: 'danger',
          file,
          line,
          detail: `${label}: "${quote(match[0])}"`,
        });
    }
  });
  return risks;
}

function redacted(value: string): string {
  return `${value.slice(0, 4)}…`;
}

function quote(text: string): string {
  let oneLine = text.replace(/\s+/g, ' ').trim();
  for (const [pattern] of CREDENTIALS)
    oneLine = oneLine.replace(new RegExp(pattern.source, `${pattern.flags}g`), (value) => redacted(value));
  return oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine;
}
