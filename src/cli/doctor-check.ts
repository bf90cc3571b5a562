/**
 * One line of `steward doctor`. `note`: works, with something worth knowing (never a failure:
 * doctor exits 0 on notes). `fixable`: `steward doctor --fix` can repair it.
 */
export type Check = {
  name: string;
  ok: boolean;
  note?: boolean;
  detail: string;
  fix?: string;
  fixable?: boolean;
};
