import { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '@app/errors';
import { isTermCategory, type TermCategory } from './term-category';

/** An unknown vocabulary is a missing resource (404), not a bad parameter (400). */
export class TermCategoryPipe implements PipeTransform<string, TermCategory> {
  transform(category: string): TermCategory {
    if (!isTermCategory(category)) throw new NotFoundError(`Unknown term category "${category}"`);
    return category;
  }
}
