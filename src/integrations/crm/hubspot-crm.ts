import {
  badResponse,
  type FailureContext,
  httpFailure,
  networkFailure,
  ProviderError,
} from '../provider-error.ts';
import type { ContactFields, CrmContact, CrmDeal, CrmNote, CrmProvider, DealFields } from './crm-types.ts';

const CONTACT_PROPERTIES = [
  'email',
  'firstname',
  'lastname',
  'company',
  'phone',
  'jobtitle',
  'lastmodifieddate',
];
const DEAL_PROPERTIES = ['dealname', 'dealstage', 'amount', 'closedate', 'pipeline'];
/** HubSpot-defined association types: note → contact, note → deal. */
const NOTE_TO = { contact: 202, deal: 214 } as const;
const NOTES_SHOWN = 10;

type HubspotObject = { id?: unknown; properties?: Record<string, string | null> };

type Method = 'GET' | 'POST' | 'PATCH';

/**
 * HubSpot CRM v3 over its REST API (basePath = HUBSPOT_BASE_URL), with a private app access
 * token. Plain `fetch`: Steward makes seven calls, for which the generated SDK weighs 50 MB.
 */
export class HubspotCrm implements CrmProvider {
  readonly name = 'HubSpot';
  readonly #basePath: string;
  readonly #accessToken: string;
  readonly #fetch: typeof fetch;
  readonly #context: FailureContext;

  constructor(options: { accessToken: string; basePath?: string; reconnect: string; fetch?: typeof fetch }) {
    this.#basePath = (options.basePath ?? 'https://api.hubapi.com').replace(/\/+$/, '');
    this.#accessToken = options.accessToken;
    this.#fetch = options.fetch ?? fetch;
    this.#context = { provider: 'HubSpot', reconnect: options.reconnect };
  }

  async searchContacts(
    query: { text?: string; email?: string; company?: string; limit: number },
    signal?: AbortSignal,
  ): Promise<CrmContact[]> {
    const filters = [
      ...(query.email ? [{ propertyName: 'email', operator: 'EQ', value: query.email }] : []),
      ...(query.company
        ? [{ propertyName: 'company', operator: 'CONTAINS_TOKEN', value: query.company }]
        : []),
    ];
    const result = await this.#call(signal, 'POST', '/crm/v3/objects/contacts/search', {
      query: query.text,
      filterGroups: filters.length ? [{ filters }] : [],
      properties: CONTACT_PROPERTIES,
      limit: query.limit,
      sorts: ['-lastmodifieddate'],
    });
    return this.#list(result).map((object) => this.#contact(object));
  }

  async getContact(
    id: string,
    signal?: AbortSignal,
  ): Promise<{ contact: CrmContact; notes: CrmNote[] } | null> {
    if (!/^\d{1,20}$/.test(id)) return null;
    const object = await this.#orNull(() =>
      this.#call(
        signal,
        'GET',
        `/crm/v3/objects/contacts/${id}?${new URLSearchParams({ properties: CONTACT_PROPERTIES.join(','), associations: 'notes' })}`,
      ),
    );
    if (!object) return null;
    const associations = (object as { associations?: Record<string, { results?: Array<{ id?: unknown }> }> })
      .associations;
    const noteIds = (associations?.notes?.results ?? []).map((entry) => String(entry.id)).slice(-50);
    let notes: CrmNote[] = [];
    if (noteIds.length) {
      const batch = await this.#call(signal, 'POST', '/crm/v3/objects/notes/batch/read', {
        inputs: noteIds.map((noteId) => ({ id: noteId })),
        properties: ['hs_note_body', 'hs_timestamp'],
        propertiesWithHistory: [],
      });
      notes = this.#list(batch)
        .map((note) => ({
          id: String(note.id),
          body: note.properties?.hs_note_body ?? '',
          createdAt: date(note.properties?.hs_timestamp),
        }))
        .sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0))
        .slice(0, NOTES_SHOWN);
    }
    return { contact: this.#contact(object), notes };
  }

  async createContact(fields: ContactFields, signal?: AbortSignal): Promise<CrmContact> {
    const object = await this.#call(signal, 'POST', '/crm/v3/objects/contacts', {
      properties: contactProperties(fields),
      associations: [],
    });
    return this.#contact(object);
  }

  async updateContact(id: string, fields: ContactFields, signal?: AbortSignal): Promise<CrmContact | null> {
    if (!/^\d{1,20}$/.test(id)) return null;
    const object = await this.#orNull(() =>
      this.#call(signal, 'PATCH', `/crm/v3/objects/contacts/${id}`, {
        properties: contactProperties(fields),
      }),
    );
    return object ? this.#contact(object) : null;
  }

  async searchDeals(
    query: { text?: string; stage?: string; limit: number },
    signal?: AbortSignal,
  ): Promise<CrmDeal[]> {
    const filters = query.stage ? [{ propertyName: 'dealstage', operator: 'EQ', value: query.stage }] : [];
    const result = await this.#call(signal, 'POST', '/crm/v3/objects/deals/search', {
      query: query.text,
      filterGroups: filters.length ? [{ filters }] : [],
      properties: DEAL_PROPERTIES,
      limit: query.limit,
      sorts: ['-hs_lastmodifieddate'],
    });
    return this.#list(result).map((object) => this.#deal(object));
  }

  async updateDeal(id: string, fields: DealFields, signal?: AbortSignal): Promise<CrmDeal | null> {
    if (!/^\d{1,20}$/.test(id)) return null;
    const properties: Record<string, string> = {};
    if (fields.name !== undefined) properties.dealname = fields.name;
    if (fields.stage !== undefined) properties.dealstage = fields.stage;
    if (fields.amount !== undefined) properties.amount = String(fields.amount);
    if (fields.closeDate !== undefined) properties.closedate = fields.closeDate.toISOString();
    const object = await this.#orNull(() =>
      this.#call(signal, 'PATCH', `/crm/v3/objects/deals/${id}`, { properties }),
    );
    return object ? this.#deal(object) : null;
  }

  async addNote(
    target: { kind: 'contact' | 'deal'; id: string },
    body: string,
    signal?: AbortSignal,
  ): Promise<CrmNote | null> {
    if (!/^\d{1,20}$/.test(target.id)) return null;
    // HubSpot would create an orphan note for a missing record: check it exists first.
    const exists = await this.#orNull(() =>
      this.#call(
        signal,
        'GET',
        target.kind === 'contact'
          ? `/crm/v3/objects/contacts/${target.id}?properties=email`
          : `/crm/v3/objects/deals/${target.id}?properties=dealname`,
      ),
    );
    if (!exists) return null;
    const note = await this.#call(signal, 'POST', '/crm/v3/objects/notes', {
      properties: { hs_note_body: body, hs_timestamp: new Date().toISOString() },
      associations: [
        {
          to: { id: target.id },
          types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO[target.kind] }],
        },
      ],
    });
    const object = note as HubspotObject;
    return { id: String(object.id), body, createdAt: date(object.properties?.hs_timestamp) };
  }

  #contact(object: HubspotObject): CrmContact {
    if (object.id === undefined || object.id === null)
      throw badResponse(this.#context, 'a contact without an id');
    const p = object.properties ?? {};
    return {
      id: String(object.id),
      email: p.email ?? null,
      firstName: p.firstname ?? null,
      lastName: p.lastname ?? null,
      company: p.company ?? null,
      phone: p.phone ?? null,
      jobTitle: p.jobtitle ?? null,
      updatedAt: date(p.lastmodifieddate),
    };
  }

  #deal(object: HubspotObject): CrmDeal {
    if (object.id === undefined || object.id === null)
      throw badResponse(this.#context, 'a deal without an id');
    const p = object.properties ?? {};
    const amount = p.amount === null || p.amount === undefined || p.amount === '' ? null : Number(p.amount);
    return {
      id: String(object.id),
      name: p.dealname ?? '(unnamed deal)',
      stage: p.dealstage ?? null,
      amount: amount !== null && Number.isFinite(amount) ? amount : null,
      closeDate: date(p.closedate),
      pipeline: p.pipeline ?? null,
    };
  }

  #list(result: unknown): HubspotObject[] {
    const results = (result as { results?: unknown }).results;
    if (!Array.isArray(results)) throw badResponse(this.#context, 'a search without results');
    return results as HubspotObject[];
  }

  async #orNull<T>(call: () => Promise<T>): Promise<T | null> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderError && error.issue === 'not_found') return null;
      throw error;
    }
  }

  /** One API call: the JSON object answered, or a ProviderError that says what to do. */
  async #call(
    signal: AbortSignal | undefined,
    method: Method,
    path: string,
    body?: unknown,
  ): Promise<object> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.#basePath}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw networkFailure(this.#context, error);
    }
    const text = await response.text().catch((error: unknown) => {
      if (signal?.aborted) throw error;
      throw networkFailure(this.#context, error);
    });
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      if (response.ok) throw badResponse(this.#context, `not JSON: ${text.slice(0, 60)}`);
    }
    if (!response.ok) {
      const message =
        parsed && typeof parsed === 'object' ? String((parsed as { message?: unknown }).message ?? '') : '';
      const retryAfter = Number(response.headers.get('retry-after'));
      throw httpFailure(this.#context, response.status, message, {
        retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      });
    }
    if (!parsed || typeof parsed !== 'object')
      throw badResponse(this.#context, `expected a JSON object, got ${text.slice(0, 60)}`);
    return parsed;
  }
}

function contactProperties(fields: ContactFields): Record<string, string> {
  const properties: Record<string, string> = {};
  if (fields.email !== undefined && fields.email !== null) properties.email = fields.email;
  if (fields.firstName !== undefined && fields.firstName !== null) properties.firstname = fields.firstName;
  if (fields.lastName !== undefined && fields.lastName !== null) properties.lastname = fields.lastName;
  if (fields.company !== undefined && fields.company !== null) properties.company = fields.company;
  if (fields.phone !== undefined && fields.phone !== null) properties.phone = fields.phone;
  if (fields.jobTitle !== undefined && fields.jobTitle !== null) properties.jobtitle = fields.jobTitle;
  return properties;
}

function date(value: string | null | undefined): Date | null {
  if (!value) return null;
  const parsed = /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}
