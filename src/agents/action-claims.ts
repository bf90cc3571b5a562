/*
 * What a reply says was done ("I've sent the email", "The task has been created"), read
 * conservatively: only first-person ("I sent", "I've created") and perfect passive ("has been
 * scheduled") statements, never questions, negations ("I have not sent"), plans ("I'll send")
 * or quotes; a verb that could mean many things ("created", "deleted") counts only with a noun
 * that names its domain ("task", "meeting", "file").
 */

type Domain = 'email' | 'tasks' | 'calendar' | 'files' | 'crm' | 'memory' | 'workflow' | 'profile';

/** A claimed action: the skills that would back it, and the skill its "not run" line names. */
export type ActionClaim = {
  /** The verb as written ("sent", "created"). */
  verb: string;
  /** Skill names (`email.send`) or domains (`tasks.*`) whose `done` receipt backs the claim. */
  backedBy: string[];
  notRunSkill: string;
};

const NOUNS: ReadonlyArray<readonly [RegExp, Domain]> = [
  [/\b(?:tasks?|to-?dos?|reminders?)\b/gi, 'tasks'],
  [/\b(?:events?|meetings?|appointments?|calendar|invites?|invitations?|calls?)\b/gi, 'calendar'],
  [/\b(?:e-?mails?|mails?|replies|reply|drafts?)\b/gi, 'email'],
  [/\b(?:files?|documents?|docs?|folders?)\b/gi, 'files'],
  [/\b(?:contacts?|deals?)\b/gi, 'crm'],
  [/\b(?:memory|memories|preferences?)\b/gi, 'memory'],
  [/\b(?:workflows?|automations?|digests?)\b/gi, 'workflow'],
  [/\b(?:profile|time ?zone)\b/gi, 'profile'],
];

type Rule = {
  verbs: readonly string[];
  /** The claim's skills when the verb alone says (sent → email.send). */
  fixed?: { backedBy: string[]; notRunSkill: string };
  /** The skill a "not run" line names for each domain the sentence's noun may name. */
  byDomain?: Partial<Record<Domain, string>>;
  /** Used when no noun names a domain (absent: the claim is ignored). */
  fallbackDomain?: Domain;
};

const RULES: readonly Rule[] = [
  {
    verbs: ['sent', 'emailed', 'forwarded', 'replied'],
    fixed: { backedBy: ['email.send', 'email.reply'], notRunSkill: 'email.send' },
  },
  { verbs: ['drafted'], fixed: { backedBy: ['email.draft'], notRunSkill: 'email.draft' } },
  {
    verbs: ['scheduled', 'booked', 'rescheduled'],
    byDomain: { calendar: 'calendar.create', tasks: 'tasks.create', workflow: 'workflow.build' },
    fallbackDomain: 'calendar',
  },
  {
    verbs: ['created', 'added', 'set up'],
    byDomain: {
      tasks: 'tasks.create',
      calendar: 'calendar.create',
      email: 'email.draft',
      files: 'files.write',
      crm: 'crm.contact_create',
      memory: 'memory.save',
      workflow: 'workflow.build',
    },
  },
  {
    verbs: ['saved', 'stored', 'noted', 'remembered'],
    byDomain: {
      files: 'files.write',
      memory: 'memory.save',
      profile: 'profile.update',
      tasks: 'tasks.create',
    },
    fallbackDomain: 'memory',
  },
  {
    verbs: ['deleted', 'removed', 'cancelled', 'canceled', 'archived'],
    byDomain: {
      tasks: 'tasks.delete',
      calendar: 'calendar.delete',
      files: 'files.delete',
      email: 'email.archive',
    },
  },
  {
    verbs: ['updated', 'changed', 'moved', 'renamed', 'marked', 'edited'],
    byDomain: {
      tasks: 'tasks.update',
      calendar: 'calendar.update',
      files: 'files.move',
      crm: 'crm.contact_update',
      profile: 'profile.update',
      memory: 'memory.save',
    },
  },
];

const ADVERBS = '(?:(?:just|now|also|already|successfully|then|gone ahead and)\\s+)*';
const VERB_LIST = RULES.flatMap((rule) => rule.verbs)
  .sort((a, b) => b.length - a.length)
  .map((verb) => verb.replace(' ', '\\s+'))
  .join('|');
/** "I sent", "I've sent", "I have just sent", "has been sent", "have been created". */
const CLAIM = new RegExp(
  `\\b(?:I(?:['’]ve|\\s+have)?\\s+${ADVERBS}|(?:has|have)\\s+${ADVERBS}been\\s+${ADVERBS})(${VERB_LIST})\\b`,
  'gi',
);

/** A further verb of the same claim: "I created the task **and sent** the email". */
const CONTINUED = new RegExp(`(?:,|\\band\\b|\\bthen\\b)\\s+${ADVERBS}(${VERB_LIST})\\b`, 'gi');

/** Sentences of `text` that state something (questions, quotes and code left out). */
function statements(text: string): string[] {
  const out: string[] = [];
  let inCode = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      inCode = !inCode;
      continue;
    }
    if (inCode || /^\s*>/.test(line)) continue;
    const withoutCode = line.replace(/`[^`]*`/g, ' ');
    for (const sentence of withoutCode.split(/(?<=[.!?;])\s+/)) {
      if (sentence.trim() && !sentence.trim().endsWith('?')) out.push(sentence);
    }
  }
  return out;
}

/** The domain named by the noun nearest to `at` in `sentence`, if any. */
function nearestDomain(sentence: string, at: number): Domain | null {
  let best: { domain: Domain; distance: number } | null = null;
  for (const [pattern, domain] of NOUNS) {
    for (const match of sentence.matchAll(pattern)) {
      const distance = Math.abs((match.index ?? 0) - at);
      if (!best || distance < best.distance) best = { domain, distance };
    }
  }
  return best?.domain ?? null;
}

/** The actions `text` says were done, in order (one per claim). */
export function claimedActions(text: string): ActionClaim[] {
  const claims: ActionClaim[] = [];
  for (const sentence of statements(text)) {
    const first = new RegExp(CLAIM.source, 'i').exec(sentence);
    const matches = first
      ? [
          ...sentence.matchAll(CLAIM),
          ...[...sentence.slice(first.index).matchAll(CONTINUED)].map((match) =>
            Object.assign(match, { index: (match.index ?? 0) + first.index }),
          ),
        ].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      : [];
    for (const match of matches) {
      const verb = match[1]!.toLowerCase().replace(/\s+/g, ' ');
      const rule = RULES.find((candidate) => candidate.verbs.includes(verb));
      if (!rule) continue;
      if (rule.fixed) {
        claims.push({ verb, ...rule.fixed });
        continue;
      }
      const named = nearestDomain(sentence, match.index ?? 0);
      const byDomain = rule.byDomain ?? {};
      const namedSkill = named ? byDomain[named] : undefined;
      const fallbackSkill = rule.fallbackDomain ? byDomain[rule.fallbackDomain] : undefined;
      if (named && namedSkill) {
        claims.push({ verb, backedBy: [`${named}.*`], notRunSkill: namedSkill });
      } else if (fallbackSkill) {
        // No noun says what was done: any effect this verb may mean backs it.
        claims.push({
          verb,
          backedBy: Object.keys(byDomain).map((domain) => `${domain}.*`),
          notRunSkill: fallbackSkill,
        });
      }
    }
  }
  return claims;
}
