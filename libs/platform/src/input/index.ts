export { InputProperty, Refused, refuse } from './input-property';
export {
  BooleanParam,
  FieldsParam,
  MAX_INT,
  OneOfParam,
  PathTextParam,
  PatternParam,
  PositiveIntParam,
  TextParam,
  UUID_PATTERN,
  UuidParam,
} from './query-params';
export {
  BooleanField,
  IdOrNameField,
  IntegerField,
  OneOfField,
  TextField,
  TextListField,
} from './body-fields';
export type { TextOptions } from './body-fields';
