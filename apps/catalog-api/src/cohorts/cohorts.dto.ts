import { ExactFiltersQuery } from '../common/query-input';
import { COHORT_FILTERS } from './cohorts.repository';

export class CohortsQuery extends ExactFiltersQuery(COHORT_FILTERS) {}
