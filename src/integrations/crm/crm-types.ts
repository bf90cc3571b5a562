export type CrmContact = {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  phone: string | null;
  jobTitle: string | null;
  updatedAt: Date | null;
};

export type ContactFields = Partial<
  Pick<CrmContact, 'email' | 'firstName' | 'lastName' | 'company' | 'phone' | 'jobTitle'>
>;

export type CrmDeal = {
  id: string;
  name: string;
  stage: string | null;
  amount: number | null;
  closeDate: Date | null;
  pipeline: string | null;
};

export type DealFields = { name?: string; stage?: string; amount?: number; closeDate?: Date };

export type CrmNote = { id: string; body: string; createdAt: Date | null };

/**
 * A CRM. Unknown ids are null; provider failures throw ProviderError. Every method honours
 * `signal` (a call in flight is abandoned when it fires).
 */
export interface CrmProvider {
  /** Shown to the user: `HubSpot`. */
  readonly name: string;
  searchContacts(
    query: { text?: string; email?: string; company?: string; limit: number },
    signal?: AbortSignal,
  ): Promise<CrmContact[]>;
  /** The contact with its most recent notes (newest first). */
  getContact(id: string, signal?: AbortSignal): Promise<{ contact: CrmContact; notes: CrmNote[] } | null>;
  createContact(fields: ContactFields, signal?: AbortSignal): Promise<CrmContact>;
  updateContact(id: string, fields: ContactFields, signal?: AbortSignal): Promise<CrmContact | null>;
  searchDeals(
    query: { text?: string; stage?: string; limit: number },
    signal?: AbortSignal,
  ): Promise<CrmDeal[]>;
  updateDeal(id: string, fields: DealFields, signal?: AbortSignal): Promise<CrmDeal | null>;
  /** A note on a contact or a deal; null when that record does not exist. */
  addNote(
    target: { kind: 'contact' | 'deal'; id: string },
    body: string,
    signal?: AbortSignal,
  ): Promise<CrmNote | null>;
}
