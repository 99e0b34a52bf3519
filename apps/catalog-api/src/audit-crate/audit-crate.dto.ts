import { PathTextParam } from '@app/platform';

/** Project acronyms are at most 200 characters (the column). */
export class AuditCrateParams {
  @PathTextParam('Project acronym', 200)
  acronym!: string;
}
