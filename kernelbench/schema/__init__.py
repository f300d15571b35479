"""One way to declare and check the fields of the YAML files kernelbench reads -- experiment configs,
paper files, the dataset registry -- and the parameters of its estimators, and to generate their
references from the same declarations.

    values.py     refusals (the dotted path, what was given and allowed, the closest match), numbers
                  as YAML 1.1 leaves them
    kinds.py      the kinds of value a field (or a parameter) accepts: read from a file, held by a
                  value set in code, described for the reference
    declare.py    field(...), @section, reading a section, the reference

It imports nothing from kernelbench but kernelbench.errors: every layer may declare its files with it.
"""
from kernelbench.schema.declare import (Documented, Field, check, documented, field, holds_section, is_section, keys,
                                        markdown, nested, read_object, read_section, section)
from kernelbench.schema.kinds import (Anything, Count, Either, Flag, Items, Named, Null, Number, Rule, Subset, Text,
                                      Words, rule)
from kernelbench.schema.values import (as_float, as_int, check_keys, fail, join_path, number_from_string, number_text,
                                       read_list, read_mapping, refusals_as, show, suggest)

__all__ = [
    "Documented", "Field", "check", "documented", "field", "holds_section", "is_section", "keys", "markdown", "nested",
    "read_object", "read_section", "section", "Anything", "Count", "Either", "Flag", "Items", "Named", "Null", "Number",
    "Rule", "Subset", "Text", "Words", "rule", "as_float", "as_int", "check_keys", "fail", "join_path",
    "number_from_string", "number_text", "read_list", "read_mapping", "refusals_as", "show", "suggest",
]
