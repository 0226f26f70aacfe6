// One grammar for every textual PTO form (see docs/language.md):
//  - MLIR-style .pto modules (func/arith/scf/pto dialects) as PTOAS and frontends emit them,
//  - the seed forms: PTO-AS assembly (`tadd %d, %a, %b : T`), SSA (`%d = pto.tsqrt %s : T -> T`),
//    the sync form (`%d = tcvt %s {rmode = ...}`), `<rmode=...>`, DPS (`ins(..) outs(..)`),
//  - manual placement (`pto.tassign %t, tile(0x1000)` / `@tile(..)`), event chains (`wait(..)`),
//  - light kernel declarations for hand-written assembly (`kernel @k(...) { ... }`),
//  - canonical block assembly lines (`BSTART.VEC TADD, FP32` ... `BSTOP`).
//
// Structural operations (module, func.func, scf.for/if/while, sections, kernel) have their own
// rules because they own regions. Every other operation is parsed generically as a result list,
// an op name and a sequence of "pieces" (operands, types, attributes, ins/outs groups); the
// Kernel IR builder (asm/) gives the pieces their meaning per op. The piece alternatives are
// chosen so that a new statement can always be told apart from a continuation of the previous
// one without relying on newlines: a statement starts with `%v =`, an op name, or a keyword, and
// no piece can start with a bare identifier unless a `=`/`(`/`:` follows it.
grammar PTO;

@parser::members {
  /// A piece that may follow the type list of a generic op: `-> T`, `{attrs}`, `#attr`, `<...>`,
  /// `key = value`, or `wait(...)`/`record(...)`. Operands may not follow the types, so a
  /// statement such as `%a, %b = ...` on the next line cannot be read as more operands.
  bool tailStart() {
    size_t t = _input->LA(1);
    if (t == ARROW || t == LBRACE || t == HASH_ID || t == LANGLE) return true;
    if ((t == KW_WAIT || t == KW_RECORD || t == KW_INS || t == KW_OUTS) && _input->LA(2) == LPAREN) return true;
    return t != VALUE_ID && _input->LA(2) == EQUALS;
  }
  /// A branch's successor (`^bb1`, `^bb1(%x : i32)`), not the label of the next block (`^bb1:`,
  /// `^bb1(%x: i32):`, a ':' after the label or its argument list).
  bool successorStart() {
    if (_input->LA(1) != CARET_ID) return false;
    if (_input->LA(2) != LPAREN) return _input->LA(2) != COLON;
    int depth = 0;
    for (ssize_t k = 2;; ++k) {
      antlr4::Token* t = _input->LT(k);
      if (t->getType() == antlr4::Token::EOF) return false;
      const std::string text = t->getText();
      if (text == "(") ++depth;
      else if (text == ")" && --depth == 0) return _input->LA(k + 1) != COLON;
    }
  }
  /// `valid [..]` (pto.subview's run-time valid shape): the one word that takes a bracket. Any
  /// other word before '[' starts the next statement (`pto.set_flag[<PIPE_V>, ...]`).
  bool validClause() {
    return _input->LA(1) == IDENT && _input->LA(2) == LBRACKET && _input->LT(1)->getText() == "valid";
  }
  /// The bare enum words of PTOAS's op syntax (`pto.cmo.cacheinvalid %v single_cache_line`,
  /// `pto.cmo.cacheinvalid all #pto.address_space<gm>`): any other word starts a statement.
  bool bareWord() {
    if (_input->LA(1) != IDENT || _input->LA(2) == EQUALS) return false;
    const std::string w = _input->LT(1)->getText();
    // `buf(%ping, %pong)`: the staging tiles of PTOAS's pto.comm.tput / tget; `recv(...)` and
    // `group(...)`: a collective's staging tiles and members (a paren follows).
    if (w == "buf" || w == "recv" || w == "group") return _input->LT(2)->getText() == "(";
    // `ins(%acc : T fp %scale : S)`: PTOAS's tstore names its scaling tile so.
    if (w == "fp") return _input->LA(2) == VALUE_ID;
    return w == "single_cache_line" || w == "all";
  }
  /// Whether the next tokens are a result list and `=` (`%a =`, `%a, %b =`, `%a:2 =`): the start
  /// of the next statement, never a piece of the current op.
  bool startsResultList() {
    for (size_t k = 1;; k += 2) {
      if (_input->LA(static_cast<ssize_t>(k)) != VALUE_ID) return false;
      if (_input->LA(static_cast<ssize_t>(k + 1)) == COLON && _input->LA(static_cast<ssize_t>(k + 2)) == INT) k += 2;
      const size_t next = _input->LA(static_cast<ssize_t>(k + 1));
      if (next == EQUALS) return true;
      if (next != COMMA) return false;
    }
  }

  // Rule entry and exit as antlr4::Parser does them, minus its costs. The generated rule
  // functions call enterRule, exitRule, enterOuterAlt, finally and getInterpreter by unqualified
  // name, so they use these members: enterRule and enterOuterAlt override the virtual ones, the
  // others hide Parser::exitRule, antlrcpp::finally and Recognizer::getInterpreter. Every parent
  // in this parser's tree is a ParserRuleContext and its simulator is a ParserATNSimulator, so a
  // static cast does what ANTLR 4.9 does with a dynamic_cast (type names compared as strings
  // across the shared library) on every rule entry, exit and prediction; and the exit action
  // needs no heap-allocated std::function. Together a tenth of pto-as's instructions on a large
  // module. The effects are those of the 4.9 runtime's functions, step for step.
  void enterRule(antlr4::ParserRuleContext* localctx, size_t state, size_t) override {
    setState(state);
    _ctx = localctx;
    _ctx->start = _input->LT(1);
    if (_buildParseTrees && _ctx->parent != nullptr)
      static_cast<antlr4::ParserRuleContext*>(_ctx->parent)->addChild(_ctx);
    if (!_parseListeners.empty()) triggerEnterRuleEvent();
  }
  void exitRule() {
    // After EOF was matched LT(-1) is not the last token: it stays LT(1).
    _ctx->stop = _matchedEOF ? _input->LT(1) : _input->LT(-1);
    if (!_parseListeners.empty()) triggerExitRuleEvent();
    setState(_ctx->invokingState);
    _ctx = static_cast<antlr4::ParserRuleContext*>(_ctx->parent);
  }
  void enterOuterAlt(antlr4::ParserRuleContext* localctx, size_t altNum) override {
    localctx->setAltNumber(altNum);
    // A labeled alternative's context replaces the rule's context as its parent's last child.
    if (_buildParseTrees && _ctx != localctx && _ctx->parent != nullptr) {
      auto* parent = static_cast<antlr4::ParserRuleContext*>(_ctx->parent);
      parent->removeLastChild();
      parent->addChild(localctx);
    }
    _ctx = localctx;
  }
  template <typename T> T* getInterpreter() const { return static_cast<T*>(_interpreter); }
  /// Runs an action when the rule function returns or unwinds (the exit of every rule).
  template <typename F> class ExitAction {
  public:
    explicit ExitAction(F action) : action_(std::move(action)) {}
    ExitAction(const ExitAction&) = delete;
    ExitAction& operator=(const ExitAction&) = delete;
    ~ExitAction() { action_(); }
  private:
    F action_;
  };
  template <typename F> static ExitAction<F> finally(F action) { return ExitAction<F>(std::move(action)); }
}

file : item* EOF ;

item
  : moduleOp
  | funcOp
  | kernelOp
  | locAlias
  | typeAlias
  | stmt
  ;

// MLIR's type aliases (`!scratch = !pto.tile_buf<vec, 1x192xf32>`), defined before their uses.
typeAlias : BANG_ID '=' type ;

moduleOp : 'module' SYMBOL? ('attributes' attrDict)? '{' item* '}' LOC? ;

// MLIR debug locations (docs/language.md, "Debug locations"): `loc(...)` is one LOC token, read by
// asm/parse/Locations.cpp; `#loc3 = loc(...)` defines an alias, before or after the module.
locAlias : HASH_ID '=' LOC ;

funcOp
  : 'func.func' visibility=('private' | 'public')? SYMBOL '(' (funcArg (',' funcArg)*)? ')'
    funcResults? ('attributes' attrDict)? region? LOC?
  ;
funcArg : (VALUE_ID ':')? type attrDict? LOC? ;
funcResults : '->' (type | '(' (type (',' type)*)? ')') ;

// Hand-written PTO-AS kernels: `kernel @name(%x: !pto.ptr<f32>, %n: index) { ... }`.
kernelOp : 'kernel' SYMBOL '(' (funcArg (',' funcArg)*)? ')' ('attributes' attrDict)? region LOC? ;

// A region is one block or, with the cf dialect, several (`^bb1(%x: i32):` starts each after
// the first); asm/parse/Structurize.cpp turns the blocks into scf.if / scf.while.
region : '{' blockLabel? stmt* (blockLabel stmt*)* '}' ;
blockLabel : CARET_ID ('(' (funcArg (',' funcArg)*)? ')')? ':' ;

stmt
  : ((resultList '=')? (scfFor | scfIf | scfWhile | scfExecute | genericOp) | section | blockInsn) LOC?
  ;

resultList : resultGroup (',' resultGroup)* ;
resultGroup : VALUE_ID (':' INT)? ;

scfFor
  : 'scf.for' VALUE_ID '=' operand 'to' operand 'step' operand
    ('iter_args' '(' iterArg (',' iterArg)* ')' '->' typeGroup)? (':' type)? region
  ;
iterArg : VALUE_ID '=' operand ;
scfIf : 'scf.if' operand ('->' typeGroup)? region ('else' region)? ;
scfWhile
  : 'scf.while' '(' (iterArg (',' iterArg)*)? ')' ':' type region 'do' region
  ;
typeGroup : type | '(' (type (',' type)*)? ')' ;
// `scf.execute_region [-> types] { blocks } [{attrs}]`: its ops run in place, once.
scfExecute : 'scf.execute_region' ('->' typeGroup)? region attrDict? ;

section : kind=('pto.section.vector' | 'pto.section.cube') region ;

genericOp : opName (predicate=predicateWord ',')? headPiece* (typeList tailPiece*)? ;
// cmpi/cmpf predicates; cmpf has `true` and `false` too.
predicateWord : IDENT | 'true' | 'false' ;
// A quoted op name followed by `(` (`"pto.tmov"(%a, %b)`, MLIR's generic form) starts the next
// statement, never a literal piece of this one.
headPiece : {_input->LA(1) != COLON && !startsResultList() && !(_input->LA(1) == STRING && _input->LA(2) == LPAREN)}? piece ;
tailPiece : {tailStart()}? piece ;
typeList : ':' type (',' type)* ('to' type)? ;
opName : IDENT | 'tile' | 'wait' | 'record' | STRING ;

// Canonical block assembly, as pto-objdump prints it.
blockInsn : BLOCK_MNEMONIC (blockOperand (',' blockOperand)*)? ;
blockOperand
  : IDENT ('=' (INT | IDENT))?
  | TREG
  | '-'? INT
  | '->' (IDENT | TREG)
  ;

operand : VALUE_ID HASH_NUM? | literal ;

piece
  : VALUE_ID HASH_NUM?                       # valuePiece
  | SYMBOL                                    # symbolPiece
  | literal                                   # literalPiece
  | ','                                       # commaPiece
  | typeList                                  # typesPiece
  | '->' typeGroup                            # arrowPiece
  | attrDict                                  # dictPiece
  | bracket                                   # bracketPiece
  | '<' attrDict '>'                          # propsPiece
  | angle                                     # anglePiece
  | HASH_ID angle? ('=' attrValue)?           # hashPiece
  | word '=' attrValue                        # keywordPiece
  | 'sizes' bracket                           # sizesPiece
  | {validClause()}? IDENT bracket           # wordBracketPiece
  | {bareWord()}? IDENT                       # bareWordPiece
  | callKw=('ins' | 'outs' | 'tile' | 'wait' | 'record') '(' piece* ')'   # callPiece
  | 'outs' ':' type                           # outsTypePiece
  | word ':' attrValue                        # colonKeywordPiece
  | 'to'                                      # toPiece
  // MLIR's generic form of an op with regions (`"scf.if"(%c) ({ ... }, { ... }) : ...`): read so
  // that the builder can refuse it by name.
  | {_input->LA(1) == LPAREN && _input->LA(2) == LBRACE}? '(' region (',' region)* ')'   # regionsPiece
  | {!(_input->LA(1) == LPAREN && _input->LA(2) == LBRACE)}? '(' piece* ')'              # parenPiece
  | {successorStart()}? CARET_ID ('(' piece* ')')?   # successorPiece
  ;

bracket : '[' piece* ']' ;

// Identifiers, including the grammar's keywords where a plain word is meant (`sizes = [..]`).
word
  : IDENT | 'sizes' | 'tile' | 'wait' | 'record' | 'ins' | 'outs' | 'to' | 'step' | 'do'
  | 'else' | 'iter_args' | 'kernel' | 'module' | 'attributes' | 'private' | 'public' | 'dense'
  ;

literal
  : '-'? INT
  | '-'? FLOAT
  | STRING
  | 'true'
  | 'false'
  | 'dense' angle  // `dense<[1, 2, 0, 0]>` / `dense<0>`: a vector constant (tmrgsort's counts)
  ;

attrDict : '{' (attrEntry (',' attrEntry)*)? '}' ;
attrEntry : (word | STRING) ('=' attrValue (':' type)?)? ;
attrValue
  : literal
  | HASH_ID angle?
  | angle
  | bracket
  | type
  | SYMBOL
  | VALUE_ID
  | attrDict
  | '?'
  ;

type
  : BANG_TYPE
  | BANG_ID angle?
  | IDENT angle?
  | 'tile' angle
  | angle  // PTOAS's shorthands: `<loc=vec, dtype=f16, ...>` (a tile), `<f32>` (a pointer)
  | '(' (type (',' type)*)? ')' '->' typeGroup
  ;

angle : '<' (angleArg (',' angleArg)*)? '>' ;
// `key = value`, `key: value` (`offset: ?`) and typed values (`blayout=1 : i32`).
angleArg : angleAtom+ ('=' angleAtom+)? (':' angleAtom+)? ;
angleAtom
  : word
  | '-'? INT
  | '-'? FLOAT
  | '?'
  | SHAPE
  | HASH_ID angle?
  | BANG_ID angle?
  | BANG_TYPE  // a type parameter (`!pto.multi_tile_buf<!pto.tile_buf<...>, count=2>`)
  | angle
  | STRING
  | VALUE_ID
  | '[' (angleArg (',' angleArg)*)? ']'
  ;

// ---------------------------------------------------------------- lexer

// Named here (before IDENT) because the parser's predicates refer to them.
COLON : ':' ;
COMMA : ',' ;
LBRACE : '{' ;
LANGLE : '<' ;
LPAREN : '(' ;
LBRACKET : '[' ;
EQUALS : '=' ;
KW_WAIT : 'wait' ;
KW_RECORD : 'record' ;
KW_INS : 'ins' ;
KW_OUTS : 'outs' ;

BLOCK_MNEMONIC : ('BSTART' | 'BSTOP' | 'B.' [A-Z]+) ('.' [A-Z0-9_]+)* ;
TREG : 'T#' [0-9]+ ;
SHAPE : (([0-9]+ | '?') 'x')+ ;
FLOAT : [0-9]+ '.' [0-9]* EXPONENT? | [0-9]+ EXPONENT ;
INT : '0x' [0-9a-fA-F]+ | [0-9]+ ;
VALUE_ID : '%' ID_CHAR+ ;
SYMBOL : '@' (ID_CHAR+ | STRING) ;
HASH_NUM : '#' [0-9]+ ;
HASH_ID : '#' ID_START ID_CHAR* ;
// A dialect type with its parameters as one token (`!pto.tile_buf<loc=vec, ...>`): types are the
// bulk of real modules, and one token instead of dozens keeps lexing, parsing and memory small.
// The parameters cannot contain '<' (types that nest angle brackets lex as BANG_ID + angle) nor
// '->' (so an unclosed type cannot swallow the rest of a statement). asm/parse/Syntax.cpp reads them.
BANG_TYPE : '!' ID_START ID_CHAR* '<' (~[<>\-] | '-' ~[>])* '>' ;
BANG_ID : '!' ID_START ID_CHAR* ;
CARET_ID : '^' ID_CHAR+ ;
IDENT : ID_START ID_CHAR* ;
STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;
// A whole debug location on one line, its parentheses balanced (strings may hold any of them).
LOC : 'loc(' LOC_PART* ')' ;
fragment LOC_PART : ~[()"\r\n] | '"' (~["\\\r\n] | '\\' .)* '"' | '(' LOC_PART* ')' ;

ARROW : '->' ;
LINE_COMMENT : '//' ~[\r\n]* -> skip ;
HASH_COMMENT : '#' ([ \t] ~[\r\n]*)? -> skip ;
SEMI_COMMENT : ';' ~[\r\n]* -> skip ;
WS : [ \t\r\n]+ -> skip ;
ANY : . ;

fragment ID_START : [a-zA-Z_] ;
fragment ID_CHAR : [a-zA-Z0-9_$.] ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
